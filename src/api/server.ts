import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { CardService } from '../core/service.js';
import type { Db } from '../db/schema.js';
import type { Clock } from '../infra/clock.js';
import type { Logger } from '../infra/logger.js';
import type { Redis } from '../infra/redis.js';
import { requestIdFrom, requestIds } from './access-log.js';
import { clientErrorResponder } from './http-errors.js';
import type { ApiMetrics } from './metrics.js';
import { accessLogPlugin } from './plugins/access-log.js';
import { authPlugin } from './plugins/auth.js';
import { errorsPlugin, frameworkErrorAnswer } from './plugins/errors.js';
import { idempotencyPlugin } from './plugins/idempotency.js';
import { limitsPlugin } from './plugins/limits.js';
import { openApiPlugin } from './plugins/openapi.js';
import { validationPlugin } from './plugins/validation.js';
import type { RateLimits } from './rate-limits.js';
import { apiRoutes } from './routes/index.js';
import { type LithicRoutesOptions, registerLithicRoutes } from './routes/lithic.js';
import type { WebAppFromBot, WebAppOptions } from './webapp.js';

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
  /** Lithic's ASA and events routes (`routes/lithic.ts`), each served when its secret is given. */
  lithic?: LithicRoutesOptions;
}

const REQUEST_TIMEOUT_MS = 30_000;

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
  const { core, db, clock, logger, metrics } = deps;
  const requestTimeoutMs = deps.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const newRequestId = requestIds();
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    trustProxy: trustProxyOf(deps.trustProxy),
    // Fastify's own request lines are off: the access log (`plugins/access-log.ts`) writes one line per request, by route pattern.
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
    frameworkErrors: frameworkErrorAnswer(clock),
  }).withTypeProvider<ZodTypeProvider>();

  // In this order: each plugin's hooks see the routes declared after it, and each one reads what those before it share.
  void app.register(accessLogPlugin, { logger });
  void app.register(validationPlugin);
  void app.register(limitsPlugin, { limits: deps.limits, redis: deps.redis, trustsProxy: Boolean(deps.trustProxy), logger });
  void app.register(authPlugin, { core });
  void app.register(errorsPlugin, { clock, logger, metrics });
  void app.register(idempotencyPlugin, { db, clock, logger, requestTimeoutMs, ...deps.idempotency });
  void app.register(openApiPlugin);
  void app.register(apiRoutes, {
    core,
    db,
    clock,
    logger,
    metrics,
    webApp: deps.webApp,
    cardApi: deps.cardApi !== false,
    botReady: deps.botReady,
    cardServiceReady: deps.cardServiceReady,
  });
  if (deps.lithic) registerLithicRoutes(app, { core, db, clock, logger }, deps.lithic);
  return app;
}
