import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import type { CardService } from '../core/service.js';
import type { Db } from '../db/schema.js';
import type { Clock } from '../infra/clock.js';
import type { Logger } from '../infra/logger.js';
import type { Redis } from '../infra/redis.js';
import { createApiMetrics } from './metrics.js';
import { createHttpServer } from './server.js';
import type { WebAppFromBot } from './webapp.js';

export interface RunningHttpApi {
  app: FastifyInstance;
  /** Where it listens, e.g. `http://127.0.0.1:3000`. */
  url: string;
  /** Stops accepting connections and waits for in-flight requests; the core stays open. */
  close(): Promise<void>;
}

/** The settings the HTTP API reads, by their names in `src/app/config.ts` (which checks them; its `Config` is one). */
export interface HttpApiSettings {
  HTTP_HOST: string;
  HTTP_PORT: number;
  HTTP_BODY_LIMIT_BYTES: number;
  HTTP_REQUEST_TIMEOUT_MS: number;
  HTTP_TRUST_PROXY: false | number | string[];
  API_RATE_LIMIT_PER_TOKEN: number;
  API_RATE_LIMIT_PER_ADDRESS: number;
  API_AUTH_FAILURES_PER_ADDRESS: number;
  WEBHOOK_RATE_LIMIT_PER_ADDRESS: number;
  IDEMPOTENCY_MAX_KEYS_PER_USER: number;
  OTP_RETENTION_SECONDS: number;
  WEBAPP_URL?: string;
  BOT_TOKEN?: string;
  SENSITIVE_TTL_SECONDS: number;
  /** With `lithic`, Lithic's ASA and events routes are served (`routes/lithic.ts`), each when its secret is set. */
  CARD_PROVIDER?: 'sandbox' | 'lithic';
  LITHIC_ASA_SECRET?: string;
  LITHIC_WEBHOOK_SECRET?: string;
}

export interface HttpApiOptions {
  /** The running core: its operations, database and clock (`src/app/compose.ts`'s `CoreRuntime` is one). */
  runtime: {
    core: CardService;
    database: { db: Db };
    eventsDb?: Db;
    clock: Clock;
    /** Lithic's secrets stored by `provider lithic enroll`, read at start: used for a setting the environment leaves unset. */
    storedSecrets?: { LITHIC_ASA_SECRET?: string; LITHIC_WEBHOOK_SECRET?: string };
  };
  config: HttpApiSettings;
  logger: Logger;
  /** Routes of other parts mounted before listening (the bot's webhook: counted per address with `config.webhook`), no metrics label. */
  mount?: (app: FastifyInstance) => void;
  /** Whether the bot of this process has reached Telegram, for `/readyz`; absent when no bot runs here. */
  botReady?: () => boolean;
  /** The process's Redis client (`REDIS_URL`), where the limits are counted; closed by its owner. */
  redis?: Redis;
  /** Remote mode (`CARD_SERVICE_URL`): no `/api/v1`; `/readyz` asks whether the card service answers. */
  remote?: { cardServiceReady: () => Promise<boolean> };
  /** The process's metrics registry (`METRICS_PORT`, served by its owner); nothing is collected without it. */
  registry?: Registry;
  /** The bot's side of the Mini App, served when `WEBAPP_URL` and `BOT_TOKEN` are set (`src/bot/webapp.ts`). */
  webApp?: WebAppFromBot;
}

/**
 * Serves the HTTP API over a running core on `HTTP_HOST:HTTP_PORT`, with the request limits, timeout
 * and idempotency bounds of the settings, its request durations collected in the process's metrics
 * registry when one is given. For the combined bot + API process and for `npm run api`; closing it
 * leaves the core and the metrics to their owner.
 *
 * @example
 * const api = await startHttpApi({ runtime, config, logger });
 */
export async function startHttpApi(options: HttpApiOptions): Promise<RunningHttpApi> {
  const { runtime, config, logger, mount, botReady, redis, remote, registry, webApp } = options;
  const apiLogger = logger.child({ component: 'api' });
  const metrics = registry && createApiMetrics(registry);
  const app = createHttpServer({
    core: runtime.core,
    db: runtime.database.db,
    logger: apiLogger,
    clock: runtime.clock,
    bodyLimit: config.HTTP_BODY_LIMIT_BYTES,
    requestTimeoutMs: config.HTTP_REQUEST_TIMEOUT_MS,
    trustProxy: config.HTTP_TRUST_PROXY,
    redis,
    limits: {
      perTokenPerMinute: config.API_RATE_LIMIT_PER_TOKEN,
      perAddressPerMinute: config.API_RATE_LIMIT_PER_ADDRESS,
      authFailuresPerAddress: config.API_AUTH_FAILURES_PER_ADDRESS,
      webhookPerAddressPerMinute: config.WEBHOOK_RATE_LIMIT_PER_ADDRESS,
    },
    idempotency: { maxKeysPerUser: config.IDEMPOTENCY_MAX_KEYS_PER_USER, otpTtlSeconds: config.OTP_RETENTION_SECONDS },
    metrics,
    botReady,
    ...(remote ? { cardApi: false, cardServiceReady: remote.cardServiceReady } : {}),
    lithic:
      !remote && config.CARD_PROVIDER === 'lithic'
        ? {
            // The environment's value wins; unset, the one `provider lithic enroll` stored.
            asaSecret: config.LITHIC_ASA_SECRET ?? runtime.storedSecrets?.LITHIC_ASA_SECRET,
            webhookSecret: config.LITHIC_WEBHOOK_SECRET ?? runtime.storedSecrets?.LITHIC_WEBHOOK_SECRET,
            registry,
            db: runtime.eventsDb,
          }
        : undefined,
    webApp:
      config.WEBAPP_URL && config.BOT_TOKEN && webApp
        ? { url: config.WEBAPP_URL, botToken: config.BOT_TOKEN, showSeconds: config.SENSITIVE_TTL_SECONDS, bot: webApp }
        : undefined,
  });
  // In a plugin of their own, registered after the API's: its routes see the hooks the API's plugins add to the app.
  if (mount) void app.register(async (other) => mount(other));
  try {
    await app.listen({ host: config.HTTP_HOST, port: config.HTTP_PORT });
  } catch (error) {
    await app.close();
    throw error;
  }
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info({ url }, 'HTTP API listening');
  return { app, url, close: () => app.close() };
}
