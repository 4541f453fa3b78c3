import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { isCardServiceError } from '../../core/rules/errors.js';
import type { Clock } from '../../infra/clock.js';
import type { Logger } from '../../infra/logger.js';
import { failure } from '../envelope.js';
import { STATUS_OF } from '../error-status.js';
import { HttpRefusal } from '../http-errors.js';
import { lingerBeforeClose } from '../linger.js';
import type { ApiMetrics } from '../metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts a request no route took (metrics, the access log), before it is answered. */
    observeUnmatched(request: FastifyRequest, reply: FastifyReply, statusCode: number): void;
  }
}

export interface ErrorsOptions {
  clock: Clock;
  logger: Logger;
  /** Request durations, where requests no route took are counted too (`metrics.ts`). */
  metrics?: ApiMetrics;
}

/**
 * The one place errors become responses (core refusals by code, framework refusals by kind, the rest as
 * 500) and the unknown routes are answered: counted in the metrics and the access log, limited per address.
 */
export const errorsPlugin = fp<ErrorsOptions>(
  async (app, { clock, logger, metrics }) => {
    app.decorate('observeUnmatched', (request: FastifyRequest, reply: FastifyReply, status: number) => {
      metrics?.observeUnmatched(request.method, status, reply.elapsedTime / 1000);
      app.accessLog.unmatched(request, reply, status);
    });
    installErrorHandling(app, clock, logger, {
      observeUnmatched: app.observeUnmatched,
      // Unknown paths count against the address too: guessing routes costs like any request.
      limitUnmatched: app.requestLimiter?.address,
      beforeErrorAnswer: app.authentication.beforeErrorAnswer,
    });
  },
  { name: 'errors', dependencies: ['access-log', 'limits', 'auth'] },
);

/**
 * Fastify's `frameworkErrors`: refusals the router makes before any route runs (a bad URL, an over-long
 * parameter), answered as envelopes and counted as requests no route took.
 */
export function frameworkErrorAnswer(clock: Clock) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const status = error.statusCode ?? 400;
    request.server.observeUnmatched(request, reply, status);
    void reply.code(status).send(failure(status === 414 ? 'URL is too long' : 'Invalid URL', clock.now()));
  };
}

/** Texts for what goes wrong before the core is asked (framework refusals). */
const CLIENT_ERROR_TEXT: Record<string, { status: number; text: string }> = {
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, text: 'Malformed JSON in request body' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, text: 'Malformed JSON in request body' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, text: 'Request body is too large' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, text: 'Content-Type must be application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, text: 'Request body length does not match Content-Length' },
};

/** Error bodies go in `error` instead of `message` on routes marked so (the spec's OTP endpoints). */
function usesErrorField(request: FastifyRequest): boolean {
  return request.routeOptions.config?.errorField === true;
}

/** The one place errors become responses: core refusals by code, framework refusals by kind, the rest as 500. */
function installErrorHandling(
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
