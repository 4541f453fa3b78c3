import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { CoreRuntime } from '../compose.js';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { Redis } from '../redis.js';
import { createApiMetrics, serveMetrics, type MetricsListener } from './metrics.js';
import { createHttpServer } from './server.js';

export interface RunningHttpApi {
  app: FastifyInstance;
  /** Where it listens, e.g. `http://127.0.0.1:3000`. */
  url: string;
  /** Where `/metrics` is served (its own listener, `METRICS_HOST:METRICS_PORT`); absent when METRICS_PORT is unset. */
  metricsUrl?: string;
  /** Stops accepting connections and waits for in-flight requests, then stops the metrics listener; the core stays open. */
  close(): Promise<void>;
}

/**
 * Serves the HTTP API over a running core on `HTTP_HOST:HTTP_PORT`, with the request limits, timeout
 * and idempotency bounds of the settings, and Prometheus metrics on a listener of their own when
 * `METRICS_PORT` is set. For the combined bot + API process and for `npm run api`; closing it leaves
 * the core to its owner.
 */
export async function startHttpApi(
  runtime: CoreRuntime,
  config: Config,
  logger: Logger,
  /** Routes of other parts mounted before listening (the bot's webhook): no request limits, no metrics label. */
  mount?: (app: FastifyInstance) => void,
  /** Whether the bot of this process has reached Telegram, for `/readyz`; absent when no bot runs here. */
  botReady?: () => boolean,
  /** The process's Redis client (`REDIS_URL`), where the limits are counted; closed by its owner. */
  redis?: Redis,
): Promise<RunningHttpApi> {
  const apiLogger = logger.child({ component: 'api' });
  const metrics = config.METRICS_PORT === undefined ? undefined : createApiMetrics();
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
    },
    idempotency: { maxKeysPerUser: config.IDEMPOTENCY_MAX_KEYS_PER_USER, otpTtlSeconds: config.OTP_RETENTION_SECONDS },
    metrics,
    botReady,
    webApp:
      config.WEBAPP_URL && config.BOT_TOKEN
        ? { url: config.WEBAPP_URL, botToken: config.BOT_TOKEN, showSeconds: config.SENSITIVE_TTL_SECONDS }
        : undefined,
  });
  mount?.(app);
  let metricsListener: MetricsListener | undefined;
  try {
    await app.listen({ host: config.HTTP_HOST, port: config.HTTP_PORT });
    if (metrics && config.METRICS_PORT !== undefined) {
      metricsListener = await serveMetrics(metrics.registry, config.METRICS_HOST, config.METRICS_PORT, apiLogger);
      logger.info({ url: metricsListener.url }, 'Metrics listening');
    }
  } catch (error) {
    await app.close();
    throw error;
  }
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info({ url }, 'HTTP API listening');
  return {
    app,
    url,
    metricsUrl: metricsListener?.url,
    close: async () => {
      await app.close();
      await metricsListener?.close();
    },
  };
}
