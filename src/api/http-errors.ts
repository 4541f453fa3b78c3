import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from '../infra/clock.js';
import { failure } from './envelope.js';

/**
 * A refusal of the HTTP layer itself, not of the core: rate limits (429, with `Retry-After`) and an
 * `Idempotency-Key` claim taken over by a retry (409).
 */
export class HttpRefusal extends Error {
  override readonly name = 'HttpRefusal';
  readonly code = 'HTTP_REFUSAL';
  constructor(
    readonly statusCode: number,
    text: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(text);
  }
}

/** 429 for a rate limit: `Too many requests; retry in N seconds`. */
export function tooManyRequests(retryAfterSeconds: number): HttpRefusal {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new HttpRefusal(429, `Too many requests; retry in ${seconds} second${seconds === 1 ? '' : 's'}`, seconds);
}

/**
 * HTTP the server cannot even parse (a broken request line, headers over the limit): answered on the
 * socket as an envelope too, instead of the framework's own body.
 */
export function clientErrorResponder(clock: Clock) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, text] =
      error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request headers are too large']
        : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request timed out']
          : [400, 'Malformed HTTP request'];
    const body = JSON.stringify(failure(text, clock.now()));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };
}
