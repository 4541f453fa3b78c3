import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, onResponseHookHandler } from 'fastify';
import type { Logger } from '../infra/logger.js';
import { asArray } from './auth.js';

/** An incoming `X-Request-Id` worth keeping: 1 to 128 visible ASCII characters. */
const SANE_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** The request's id: the caller's `X-Request-Id` when sane, else `make()` (a UUID). */
export function requestIdFrom(header: string | string[] | undefined, make: () => string): string {
  return typeof header === 'string' && SANE_REQUEST_ID.test(header) ? header : make();
}

const milliseconds = (reply: FastifyReply) => Math.round(reply.elapsedTime * 10) / 10;

/**
 * One access line per request, at info, when it completes: method, route pattern, status, duration (ms),
 * request id, and the user once authenticated; never the URL, a header or the token. Every reply carries
 * `x-request-id`. Each route gets its own hooks with its label fixed (as metrics does), so a request pays
 * two plain calls and one log line. Routes declared while `apiRoutes` is on are named by their pattern;
 * any other (mounted by another part: the bot's webhook, whose path may hold a secret) is named `webhook`.
 */
export function installAccessLog(app: FastifyInstance, logger: Logger) {
  let declaringApiRoutes = false;
  const write = accessLineWriter(logger);
  const tagRequest: onRequestHookHandler = (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  };
  app.addHook('onRoute', (route) => {
    const label = declaringApiRoutes ? route.url : 'webhook';
    const log: onResponseHookHandler = (request, reply, done) => {
      write?.(request, label, reply.statusCode, milliseconds(reply));
      done();
    };
    route.onRequest = [tagRequest, ...asArray(route.onRequest)];
    route.onResponse = [...asArray(route.onResponse), log];
  });
  return {
    /** Routes declared from now on (until `false`) are the API's own, logged by their pattern. */
    apiRoutes(on: boolean): void {
      declaringApiRoutes = on;
    },
    /** A request no route took (an unknown path, a URL the router refused), logged as `unmatched`; its reply gets the id. */
    unmatched(request: FastifyRequest, reply: FastifyReply, status: number): void {
      void reply.header('x-request-id', request.id);
      write?.(request, 'unmatched', status, milliseconds(reply));
    },
  };
}

/**
 * Access lines go through a child of the logger without its redaction pass, which cost a third of the
 * API's read throughput: nothing in an access line is a secret (ids, a route pattern, a status). None when
 * the logger is below info.
 */
function accessLineWriter(logger: Logger): ((request: FastifyRequest, route: string, status: number, ms: number) => void) | undefined {
  if (!logger.isLevelEnabled('info')) return undefined;
  const access = logger.child({}, { redact: [] });
  return (request, route, status, ms) => access.info(accessFields(request, route, status, ms), 'request');
}

function accessFields(request: FastifyRequest, route: string, status: number, ms: number) {
  const caller = request.caller;
  return caller
    ? { reqId: request.id, method: request.method, route, status, ms, userId: caller.userId }
    : { reqId: request.id, method: request.method, route, status, ms };
}
