import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, onResponseHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { Logger } from '../../infra/logger.js';
import { accessLines } from '../access-log.js';
import { asArray } from '../hooks.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The access log's part for the API's routes (`routes/index.ts`) and the requests no route took (`plugins/errors.ts`). */
    accessLog: AccessLog;
  }
}

type AccessLog = ReturnType<typeof installAccessLog>;

/**
 * One access line per request, at info, when it completes: method, route pattern, status, duration (ms),
 * request id, and the user once authenticated; never the URL, a header or the token. Every reply carries
 * `x-request-id`. The lines themselves are made by `accessLines` (`access-log.ts`).
 */
export const accessLogPlugin = fp<{ logger: Logger }>(
  async (app, { logger }) => {
    app.decorate('accessLog', installAccessLog(app, logger));
  },
  { name: 'access-log' },
);

const milliseconds = (reply: FastifyReply) => Math.round(reply.elapsedTime * 10) / 10;

/**
 * Each route gets its own hooks with its line's fixed part made once (as metrics does), so a request pays
 * two plain calls and one log line. Routes declared while `apiRoutes` is on are named by their pattern; any
 * other (mounted by another part: the bot's webhook, whose path may hold a secret) is named `webhook`.
 */
function installAccessLog(app: FastifyInstance, logger: Logger) {
  let declaringApiRoutes = false;
  const lineFor = accessLines(logger);
  const tagRequest: onRequestHookHandler = (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    done();
  };
  app.addHook('onRoute', (route) => {
    const write = lineFor?.(declaringApiRoutes ? route.url : 'webhook');
    const log: onResponseHookHandler = (request, reply, done) => {
      write?.(request, reply.statusCode, milliseconds(reply));
      done();
    };
    route.onRequest = [tagRequest, ...asArray(route.onRequest)];
    route.onResponse = [...asArray(route.onResponse), log];
  });
  const unmatchedLine = lineFor?.('unmatched');
  return {
    /** Routes declared from now on (until `false`) are the API's own, logged by their pattern. */
    apiRoutes(on: boolean): void {
      declaringApiRoutes = on;
    },
    /** A request no route took (an unknown path, a URL the router refused), logged as `unmatched`; its reply gets the id. */
    unmatched(request: FastifyRequest, reply: FastifyReply, status: number): void {
      void reply.header('x-request-id', request.id);
      unmatchedLine?.(request, status, milliseconds(reply));
    },
  };
}
