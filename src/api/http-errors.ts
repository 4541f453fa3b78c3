import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../infra/clock.js';
import { isCardServiceError } from '../core/rules/errors.js';
import type { Logger } from '../infra/logger.js';
import { failure } from './envelope.js';
import { lingerBeforeClose } from './linger.js';
import { STATUS_OF } from './error-status.js';

/** Texts for what goes wrong before the core is asked (framework refusals). */
const CLIENT_ERROR_TEXT: Record<string, { status: number; text: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, text: 'Malformed JSON in request body' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, text: 'Malformed JSON in request body' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, text: 'Request body is too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, text: 'Content-Type must be application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, text: 'Request body length does not match Content-Length' },
};

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

/** Error bodies go in `error` instead of `message` on routes marked so (the spec's OTP endpoints). */
function usesErrorField(request: FastifyRequest): boolean {
  return request.routeOptions.config?.errorField === true;
}

/** The one place errors become responses: core refusals by code, framework refusals by kind, the rest as 500. */
export function installErrorHandling(
  app: FastifyInstance,
  clock: Clock,
  logger: Logger,
  hooks: {
    /** Counts a request no route took (metrics, the access log), before it is answered. */
    observeUnmatched?: (request: FastifyRequest, reply: FastifyReply, statusCode: number) => void;
    /** Runs before a request no route took is answered (the per-address limit). */
    limitUnmatched?: (request: FastifyRequest) => Promise<void>;
    /** Runs before an error is answered: the error to answer with instead, when it has one to find (undefined: none). */
    beforeErrorAnswer?: (request: FastifyRequest, error: unknown) => Promise<unknown> | undefined;
  } = {},
): void {
  const { observeUnmatched, limitUnmatched, beforeErrorAnswer } = hooks;
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const instead = beforeErrorAnswer?.(request, error);
    if (instead) return instead.then((answered) => answer(answered as FastifyError, request, reply));
    return answer(error, request, reply);
  });

  function answer(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    // Also for refusals made before the route's own hooks ran (a rate limit, a bad token).
    void reply.header('x-request-id', request.id);
    const errorField = usesErrorField(request);
    if (isCardServiceError(error)) {
      const retryAfter = error.retryAfterSeconds;
      if (retryAfter !== undefined) void reply.header('retry-after', String(Math.max(1, Math.ceil(retryAfter))));
      if (error.code === 'INVALID_TOKEN') void reply.header('www-authenticate', 'Bearer');
      return reply.code(STATUS_OF[error.code]).send(failure(error.message, clock.now(), { errorField, issues: error.issues }));
    }
    if (error instanceof HttpRefusal) {
      if (error.retryAfterSeconds !== undefined) void reply.header('retry-after', String(error.retryAfterSeconds));
      // An unknown path refused by the per-address limit is still a request no route took.
      if (request.is404) observeUnmatched?.(request, reply, error.statusCode);
      return reply.code(error.statusCode).send(failure(error.message, clock.now(), { errorField }));
    }
    const known = CLIENT_ERROR_TEXT[error.code];
    if (known) {
      // A body refused before it was read whole (over the limit, of the wrong type): the connection is
      // closed after the answer, but only once the client had the time to read it.
      if (!request.raw.complete) lingerBeforeClose(request.raw.socket);
      return reply.code(known.status).send(failure(known.text, clock.now(), { errorField }));
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      return reply.code(status).send(failure('Bad request', clock.now(), { errorField }));
    }
    // Errors go under `err` only (the logger's serializer makes them safe); a public route is not named,
    // since a route mounted by another part (the bot's webhook) may carry a secret in its path.
    const route = request.routeOptions.config?.public === true ? undefined : request.routeOptions.url;
    logger.error({ reqId: request.id, route, err: error }, 'Unexpected error while handling a request');
    return reply.code(500).send(failure('Internal server error', clock.now(), { errorField }));
  }

  app.setNotFoundHandler({ preHandler: limitUnmatched }, (request, reply) => {
    observeUnmatched?.(request, reply, 404);
    return reply.code(404).send(failure('Route not found', clock.now()));
  });
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
