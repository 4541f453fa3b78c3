import type { FastifyInstance } from 'fastify';
import type { Logger } from '../infra/logger.js';

/**
 * Without `HTTP_TRUST_PROXY` a proxy's `X-Forwarded-For` is ignored, so every client behind it shares the
 * proxy's address: one address limit, one count of failed authentications, one address in the logs. Said
 * once per process, at the first request that carries the header. A listener on the server rather than a
 * hook, so it costs nothing once it has spoken.
 */
export function warnOfUntrustedProxy(app: FastifyInstance, logger: Logger): void {
  const server = app.server;
  const listener = (request: { headers: Record<string, unknown>; socket: { remoteAddress?: string } }) => {
    if (request.headers['x-forwarded-for'] === undefined) return;
    server.off('request', listener);
    logger.warn(
      { address: request.socket.remoteAddress },
      'Requests arrive with X-Forwarded-For but HTTP_TRUST_PROXY is not set: every client behind that proxy shares its address ' +
        '(its rate limits, its failed authentications); set HTTP_TRUST_PROXY to the proxy',
    );
  };
  server.on('request', listener);
}
