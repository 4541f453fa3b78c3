import type { Socket } from 'node:net';

/** How much of a refused body is read and discarded at most before the connection is closed. */
export const LINGER_MAX_BYTES = 8 * 1_048_576;
/** How long at most a connection lingers after its refusal was sent. */
export const LINGER_MAX_MS = 5_000;
// What arrives between two checks comes on top of `maxBytes` (Node's HTTP parser reads the socket natively, so the
// count is polled): on loopback tens of MiB can arrive in 100 ms, so the checks are 10 ms apart, for 5 s at most.
const CHECK_MS = 10;

const lingering = new WeakSet<Socket>();

/**
 * Closes `socket` the way proxies do (nginx's lingering close) once its answer is sent, when that answer
 * refuses a request whose body is still arriving (413: the body is over the limit). Closed at once, with
 * the rest of the body unread, the kernel resets the connection, and a client still writing (curl; Node's
 * under load) loses the answer with it. Instead the server's side is shut (FIN after the answer), and what
 * the client goes on sending is read and discarded (by Node's HTTP parser, the request being dumped) until
 * the client closes, `maxBytes` more have arrived or `maxMs` have passed; then the socket is destroyed.
 *
 * Node closes a `Connection: close` response's socket through `socket.destroySoon()`, which this replaces
 * for this one socket.
 */
export function lingerBeforeClose(socket: Socket, maxBytes = LINGER_MAX_BYTES, maxMs = LINGER_MAX_MS): void {
  if (lingering.has(socket) || socket.destroyed) return;
  lingering.add(socket);
  socket.destroySoon = function lingeringClose(this: Socket) {
    if (this.writable) this.end();
    const start = this.bytesRead;
    const started = Date.now();
    const check = setInterval(() => {
      if (this.bytesRead - start > maxBytes || Date.now() - started >= maxMs) this.destroy();
    }, CHECK_MS);
    check.unref();
    // The client has read the answer and closed its side: nothing more to discard.
    this.once('end', () => this.destroy());
    this.once('close', () => clearInterval(check));
  };
}
