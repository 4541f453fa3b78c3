import fastifySwagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import { jsonSchemaTransform, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../infra/clock.js';
import { validationError } from '../core/rules/schemas.js';
import type { CardService } from '../core/service.js';
import type { Db } from '../db/schema.js';
import type { Logger } from '../infra/logger.js';
import type { Redis } from '../infra/redis.js';
import { WindowCounts } from '../infra/window-counts.js';
import { installAccessLog, requestIdFrom, requestIds } from './access-log.js';
import { asArray, installAuthentication } from './auth.js';
import { failure } from './envelope.js';
import { envelope, errorEnvelope } from './http-schemas.js';
import { clientErrorResponder, installErrorHandling } from './http-errors.js';
import { installIdempotency } from './idempotency.js';
import { createIdempotencyStore } from './idempotency-store.js';
import { parseJsonBody } from './json-body.js';
import type { ApiMetrics } from './metrics.js';
import { withIdempotencyHeader, withOptionalEmptyBodies } from './openapi.js';
import { createRequestLimiter, type RateLimits } from './rate-limits.js';
import { warnOfUntrustedProxy } from './proxy-warning.js';
import { createReadiness } from './readiness.js';
import { cardRoutes } from './routes/cards.js';
import { catalogueRoutes } from './routes/catalogue.js';
import { historyRoutes } from './routes/history.js';
import { movementRoutes } from './routes/movements.js';
import { webAppRoutes, type WebAppFromBot, type WebAppOptions } from './webapp.js';

export interface HttpServerDeps {
  core: CardService;
  /** Used only for stored `Idempotency-Key` replies. */
  db: Db;
  logger: Logger;
  clock: Clock;
  /** Largest accepted request body in bytes (16 KiB by default). */
  bodyLimit?: number;
  /**
   * A request not received whole within this is cut off, and so is a connection idle that long
   * (a handler stuck on the database); also sizes the `Idempotency-Key` lease. 30 s by default.
   */
  requestTimeoutMs?: number;
  /**
   * Fastify's `trustProxy`: whom to believe about the client's address (default: nobody, the socket's):
   * the number of proxies in front (hops), or their addresses/CIDRs.
   */
  trustProxy?: false | number | string[];
  /** Request limits; none when absent (tests, benchmarks): `startHttpApi` always passes the settings. */
  limits?: RateLimits;
  /** The process's Redis client (`REDIS_URL`): the limits are counted there, one count for every process. */
  redis?: Redis;
  idempotency?: {
    /** How long a stored reply is replayed (24 h by default). */
    ttlSeconds?: number;
    /** How long a reply holding an OTP code is replayed (24 h by default; never longer than `ttlSeconds`). */
    otpTtlSeconds?: number;
    /** Keys kept per user, the oldest stored replies going first (1000 by default). */
    maxKeysPerUser?: number;
  };
  /**
   * Whether the bot running in this process has reached Telegram (getMe succeeded), for `/readyz`;
   * absent when no bot runs here (`bot: disabled`).
   */
  botReady?: () => boolean;
  /** Collects request durations when given (served apart, by `serveMetrics`); nothing is collected otherwise. */
  metrics?: ApiMetrics;
  /**
   * The card-details Mini App (`WEBAPP_URL` with the bot's token); not served when absent. It is the bot's:
   * its details come through `bot`, built by the bot over its card-service port (`src/bot/webapp.ts`).
   */
  webApp?: WebAppOptions & { bot: WebAppFromBot };
  /**
   * Whether to serve the card-service interface (`/api/v1`, the OpenAPI document): true unless in remote
   * mode, where this server carries only the bot's routes, `/livez` and `/readyz`.
   */
  cardApi?: boolean;
  /** Remote mode: whether the card service answers, for `/readyz` (`cardService`). */
  cardServiceReady?: () => Promise<boolean>;
}

const DAY_SECONDS = 86_400;
const REQUEST_TIMEOUT_MS = 30_000;
/** A pending `Idempotency-Key` claim is held this much longer than a request may take, then a retry may take it over. */
const LEASE_MARGIN_MS = 30_000;
const noQuery = z.strictObject({});

/**
 * Fastify's `trustProxy` for a hop count or a list of proxies. A hop count `n` believes the last `n`
 * addresses of the chain (the socket's peer, then X-Forwarded-For from its end): the client address is
 * the one the nearest of `n` proxies saw. (Fastify takes a number as trusting nobody.) The socket's peer
 * is believed whoever it is, so a hop count suits a port only the proxies can reach.
 */
function trustProxyOf(trust: false | number | string[] | undefined): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof trust !== 'number') return trust ?? false;
  return (_address, hop) => hop < trust;
}

/**
 * The spec's `/api/v1` interface over the core, with the extensions (card list, top-up quote,
 * `Idempotency-Key`, OpenAPI document, liveness; metrics collected for a listener of their own).
 * Returns the Fastify instance, not listening.
 *
 * @example
 * const app = createHttpServer({ core, db, logger, clock });
 * await app.listen({ host: '127.0.0.1', port: 3000 });
 */
export function createHttpServer(deps: HttpServerDeps): FastifyInstance {
  const { core, clock, logger, metrics } = deps;
  const requestTimeoutMs = deps.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const newRequestId = requestIds();
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    trustProxy: trustProxyOf(deps.trustProxy),
    // Fastify's own request lines are off: `installAccessLog` writes one line per request, by route pattern.
    logController: new LogController({ disableRequestLogging: true }),
    // No child logger per request (a redacting pino child is costly); faults log their request id themselves.
    childLoggerFactory: (parent) => parent,
    bodyLimit: deps.bodyLimit ?? 16_384,
    // Node's own timers, no cost per request: a request must arrive whole in time (slow senders), and
    // a connection idle that long is closed. A timed-out request is answered 408 by `clientErrorResponder`.
    requestTimeout: requestTimeoutMs,
    connectionTimeout: requestTimeoutMs,
    // The caller's `X-Request-Id` when sane (1-128 visible characters), else a new one; every reply carries it.
    genReqId: (request) => requestIdFrom(request.headers['x-request-id'], newRequestId),
    routerOptions: { maxParamLength: 100 },
    // HTTP that cannot be parsed at all, answered on the socket as an envelope too.
    clientErrorHandler: clientErrorResponder(clock),
    // During a graceful close, requests on open connections are still served rather than refused.
    return503OnClosing: false,
    // Refusals the router makes before any route runs (a bad URL, an over-long parameter), as envelopes.
    frameworkErrors: (error, request, reply: FastifyReply) => {
      const status = error.statusCode ?? 400;
      metrics?.observeUnmatched(request.method, status, reply.elapsedTime / 1000);
      accessLog.unmatched(request, reply, status);
      void reply.code(status).send(failure(status === 414 ? 'URL is too long' : 'Invalid URL', clock.now()));
    },
  }).withTypeProvider<ZodTypeProvider>();
  const accessLog = installAccessLog(app, logger);

  // Bodies are validated by the core's zod schemas; a failure is the core's own validation error.
  // A POST without a body is validated as an empty object, so its items name the missing fields.
  app.setValidatorCompiler(({ schema, httpPart }) => (data: unknown) => {
    const input = httpPart === 'body' && (data === null || data === undefined) ? {} : data;
    const result = (schema as z.ZodType).safeParse(input);
    return result.success ? { value: result.data } : { error: validationError(result.error) };
  });
  // Response schemas document the API; replies are built by the presenters and not re-validated.
  app.setSerializerCompiler(() => (data: unknown) => JSON.stringify(data));

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  // A route that declares no query parameters takes none: unknown ones are refused like unknown body fields.
  app.addHook('onRoute', (route) => {
    if (route.schema && !route.schema.querystring && route.config?.public !== true)
      route.schema = { ...route.schema, querystring: noQuery };
  });
  const limiter = deps.limits && createRequestLimiter(deps.limits, logger, deps.redis && new WindowCounts(deps.redis, logger));
  if (!deps.trustProxy) warnOfUntrustedProxy(app, logger);
  // The bot's webhook, mounted on the app later by the bot's part: its own count per address.
  if (limiter) {
    app.addHook('onRoute', (route) => {
      if (route.config?.webhook === true) route.onRequest = [limiter.webhook, ...asArray(route.onRequest)];
    });
  }
  const authentication = installAuthentication(app, core, limiter);
  installErrorHandling(app, clock, logger, {
    observeUnmatched: (request, reply, status) => {
      metrics?.observeUnmatched(request.method, status, reply.elapsedTime / 1000);
      accessLog.unmatched(request, reply, status);
    },
    // Unknown paths count against the address too: guessing routes costs like any request.
    limitUnmatched: limiter?.address,
    beforeErrorAnswer: authentication.beforeErrorAnswer,
  });
  const ttlSeconds = deps.idempotency?.ttlSeconds ?? DAY_SECONDS;
  const idempotency = createIdempotencyStore(deps.db, {
    ttlSeconds,
    leaseMs: requestTimeoutMs + LEASE_MARGIN_MS,
    maxKeysPerUser: deps.idempotency?.maxKeysPerUser ?? 1000,
  });
  installIdempotency(app, idempotency, clock, { ttlSeconds, otpTtlSeconds: deps.idempotency?.otpTtlSeconds ?? ttlSeconds }, logger);

  void app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Virtual card service',
        version: '1.0.0',
        description:
          'The card-service interface under /api/v1. Extensions beyond the spec are tagged `extension`: GET /api/v1/cards, ' +
          'POST /api/v1/cards/{id}/topup/quote, the Idempotency-Key header on every POST, this document, GET /livez and GET /readyz. ' +
          'Requests with a valid token are limited per token, the others (no token, an invalid one, the public routes) per ' +
          'client address (429 with Retry-After), and an address that fails authentication too often has its missing and ' +
          'invalid tokens refused (429) for a while; a valid token from it goes on.',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
    },
    transform: jsonSchemaTransform,
  });

  // Routes go in a plugin registered after swagger, so the document sees them. Hooks added in it reach
  // the API's own routes only, not those other parts mount on the app (the bot's webhook).
  void app.register(async (api) => {
    // Routes declared in here are logged by their pattern; any mounted on the app by another part is not.
    accessLog.apiRoutes(true);
    // Authentication counts the address of the other routes, in its own hook.
    if (limiter) {
      api.addHook('onRoute', (route) => {
        if (route.config?.public === true) route.onRequest = [limiter.address, ...asArray(route.onRequest)];
      });
    }
    metrics?.instrument(api);
    const routes = api.withTypeProvider<ZodTypeProvider>();
    const routeDeps = { core, clock };
    const cardApi = deps.cardApi !== false;
    if (cardApi) {
      catalogueRoutes(routes, routeDeps);
      cardRoutes(routes, routeDeps);
      movementRoutes(routes, routeDeps);
      historyRoutes(routes, routeDeps);
    }
    // The Mini App is the bot's: served in remote mode too, over the service the bot stands in front of.
    if (deps.webApp) webAppRoutes(api, { ...deps.webApp, clock, logger });

    routes.get(
      '/livez',
      {
        config: { public: true },
        schema: {
          summary: 'Extension: liveness (no token, no database)',
          tags: ['extension'],
          response: { 200: envelope(z.object({ status: z.literal('alive') })), 414: errorEnvelope, 429: errorEnvelope },
        },
      },
      async () => ({ success: true as const, data: { status: 'alive' as const }, message: 'Alive', timestamp: clock.now().toISOString() }),
    );
    const readiness = createReadiness(deps.db, deps.botReady, deps.cardServiceReady);
    const checkState = z.enum(['ok', 'failing']);
    const checks = z.object({
      database: checkState,
      migrations: z.enum(['ok', 'pending', 'failing']),
      bot: z.enum(['ok', 'failing', 'disabled']),
      cardService: checkState.optional(),
    });
    routes.get(
      '/readyz',
      {
        config: { public: true },
        schema: {
          summary:
            'Extension: readiness (no token): the database answers, no migration is pending, the bot (when it runs here) reached Telegram',
          tags: ['extension'],
          response: {
            200: envelope(z.object({ status: z.literal('ready'), checks })),
            414: errorEnvelope,
            429: errorEnvelope,
            503: z.object({
              success: z.literal(false),
              data: z.object({ status: z.literal('not_ready'), checks }),
              message: z.string(),
              timestamp: z.string(),
            }),
          },
        },
      },
      async (_request, reply) => {
        const { ready, checks: state } = await readiness();
        const timestamp = clock.now().toISOString();
        if (ready) return { success: true as const, data: { status: 'ready' as const, checks: state }, message: 'Ready', timestamp };
        return reply
          .code(503)
          .send({ success: false as const, data: { status: 'not_ready' as const, checks: state }, message: 'Not ready', timestamp });
      },
    );
    let document: object | undefined;
    if (cardApi) {
      routes.get('/api/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => {
        document ??= withOptionalEmptyBodies(withIdempotencyHeader(app.swagger()));
        return document;
      });
    }
    accessLog.apiRoutes(false);
  });

  return app;
}
