import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { newCard, newCustomer, type Customer } from '../helpers/core.js';
import { LINGER_MAX_BYTES, LINGER_MAX_MS } from '../../src/api/linger.js';
import { startTestApi, type TestApi } from '../helpers/http.js';

// A body over HTTP_BODY_LIMIT_BYTES is answered 413 while the client is still sending it. Closing the
// connection at once, with the rest of the body unread, makes the kernel reset it, and a client still
// writing (curl; Node's under load) loses the answer with it: the server reads and discards a bounded
// amount first, as proxies do.

/**
 * Sends `head` then `bodyBytes` of body in 64 KiB pieces a few milliseconds apart, reading whatever comes
 * back, until the server closes the connection (or the whole body is sent and 3 s pass). Resolves with
 * what was read, and whether the connection ended in a reset.
 */
function sendSlowly(port: number, head: string, bodyBytes: number, chunked = false): Promise<{ received: string; reset: boolean }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    let reset = false;
    let sent = 0;
    const piece = Buffer.alloc(65_536, 'x');
    const timer = setInterval(() => {
      if (socket.destroyed || !socket.writable) return;
      if (sent >= bodyBytes) {
        if (chunked && sent !== Number.POSITIVE_INFINITY) socket.write('0\r\n\r\n');
        sent = Number.POSITIVE_INFINITY;
        socket.resume();
        return;
      }
      const size = Math.min(piece.length, bodyBytes - sent);
      socket.write(
        chunked
          ? Buffer.concat([Buffer.from(`${size.toString(16)}\r\n`), piece.subarray(0, size), Buffer.from('\r\n')])
          : piece.subarray(0, size),
      );
      sent += size;
    }, 4);
    const done = setTimeout(() => socket.destroy(), 8_000);
    // Like a client busy sending (curl between its reads, Node's under load): what comes back is read
    // only once the body is sent, or the connection fails.
    socket.pause();
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNRESET' || error.code === 'EPIPE') reset = true;
      socket.resume();
    });
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(done);
      resolve({ received, reset });
    });
    socket.write(head);
  });
}

describe('a body over the limit', () => {
  let api: TestApi;
  let alice: Customer;
  let cardId: string;
  let port: number;
  before(async () => {
    api = await startTestApi({ bodyLimit: 16_384 });
    alice = await newCustomer(api.t);
    cardId = (await newCard(api.t, alice)).id;
    port = Number(new URL(api.baseUrl).port);
  });
  after(() => api.close());

  const head = (length: string) =>
    `POST /api/v1/cards/${cardId}/topup HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${alice.token}\r\n` +
    `Content-Type: application/json\r\n${length}\r\n`;

  test('announced by Content-Length: the client still sending receives its 413', async () => {
    const { received } = await sendSlowly(port, head('Content-Length: 3000000\r\n'), 3_000_000);
    assert.match(received, /^HTTP\/1\.1 413 /, `received: ${JSON.stringify(received.slice(0, 200))}`);
    assert.match(received, /"message":"Request body is too large"/);
    assert.match(received, /\r\nconnection: close\r\n/i);
  });

  test('what is discarded is bounded: a client that goes on sending is cut off after LINGER_MAX_BYTES', async () => {
    // Half-open: the server's FIN after its answer does not stop this client sending.
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    const total = 64 * 1_048_576;
    const started = Date.now();
    const written = await new Promise<number>((resolve) => {
      let sent = 0;
      const piece = Buffer.alloc(262_144, 'x');
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(sent));
      socket.write(head(`Content-Length: ${total}\r\n`));
      const pump = () => {
        while (sent < total && !socket.destroyed) {
          sent += piece.length;
          if (!socket.write(piece)) return void socket.once('drain', pump);
        }
      };
      pump();
    });
    assert.match(received, /^HTTP\/1\.1 413 /);
    assert.ok(written < total, `the server read all ${written} bytes`);
    assert.ok(written > LINGER_MAX_BYTES, `cut off after ${written} bytes, before LINGER_MAX_BYTES`);
    // What the kernel's buffers hold on both sides (a receive buffer may grow to 32 MiB here: tcp_rmem), and what
    // arrives between two of the linger's checks, comes on top of what was discarded.
    assert.ok(written < LINGER_MAX_BYTES + 40 * 1_048_576, `${written} bytes went through before the close`);
    assert.ok(Date.now() - started < LINGER_MAX_MS + 1_000);
  });

  test('sent in chunks: the client still sending receives its 413', async () => {
    const { received } = await sendSlowly(port, head('Transfer-Encoding: chunked\r\n'), 3_000_000, true);
    assert.match(received, /^HTTP\/1\.1 413 /, `received: ${JSON.stringify(received.slice(0, 200))}`);
  });
});
