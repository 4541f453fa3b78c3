import { type HttpApiOptions, startHttpApi, type RunningHttpApi } from '../api/start.js';
import type { Registry } from 'prom-client';
import { embeddedCardService } from '../bot/card-service/embedded.js';
import type { RunningBot } from '../bot/runtime/running-bot.js';
import { startBot } from '../bot/runtime/start-polling.js';
import { startWebhookBot } from '../bot/runtime/start-webhook.js';
import type { BotDeps } from '../bot/services.js';
import { createBotMetrics } from '../bot/metrics.js';
import { telegramHealth } from '../bot/runtime/telegram-health.js';
import { webAppBotSide, type WebAppBotSide } from '../bot/webapp.js';
import { startCoreFromConfig, type CoreRuntime } from './compose.js';
import { ConfigError, loadConfig, requireBotToken, type Config } from './config.js';
import { CardDataKeyError } from '../core/keys/secrets.js';
import { loadDotEnv } from './env.js';
import { startHousekeeping, startIdempotencyPurge } from './housekeeping.js';
import { lithicThreeDsResponder, startThreeDsAnswers } from '../core/provider/lithic-events/three-ds.js';
import { loggableError } from '../infra/log-safe.js';
import { createLogger, processLogDestination, type Logger } from '../infra/logger.js';
import { type MetricsListener, metricsRegistry, poolMetrics, serveMetrics } from '../infra/metrics.js';
import { closeRedis, connectRedis, redisAddress, RedisUnreachableError, type Redis } from '../infra/redis.js';
import { type RemoteMode, startRemoteMode } from './remote-mode.js';
import { refuseUnusablePorts } from './ports.js';
import { stopOnSignals } from './shutdown.js';

function botDeps(
  runtime: CoreRuntime,
  config: Config,
  token: string,
  logger: Logger,
  redis: Redis | undefined,
  remote: RemoteMode | undefined,
  registry: Registry | undefined,
): BotDeps {
  return {
    redis,
    metrics: registry && createBotMetrics(registry),
    ...(remote ? { cards: remote.cards } : { core: runtime.core, funding: runtime.funding }),
    cipher: runtime.cipher,
    db: runtime.database.db,
    clock: runtime.clock,
    logger: logger.child({ component: 'bot' }),
    config: {
      token,
      apiRoot: config.TELEGRAM_API_ROOT,
      sensitiveTtlSeconds: config.SENSITIVE_TTL_SECONDS,
      otpTtlSeconds: config.OTP_TTL_SECONDS,
      adminChatId: config.ADMIN_CHAT_ID,
      adminUserIds: config.ADMIN_USER_IDS,
      paymentProviderToken: config.PAYMENT_PROVIDER_TOKEN,
      webAppUrl: config.WEBAPP_URL,
    },
  };
}

/**
 * The bot's side of the Mini App the HTTP API serves, with or without the bot running here (`WEBAPP_URL`
 * with the bot's token): card details through the bot's card service, remote mode's or the embedded core's.
 */
function webAppOf(runtime: CoreRuntime, config: Config, remote: RemoteMode | undefined): WebAppBotSide | undefined {
  if (!config.WEBAPP_URL || !config.BOT_TOKEN) return undefined;
  const { core, database, clock } = runtime;
  return webAppBotSide({ cards: remote?.cards ?? embeddedCardService({ core, db: database.db, clock }), db: database.db });
}

/** Starts what the settings ask for; whatever started is stopped again by the returned function. */
async function start(config: Config, logger: Logger): Promise<() => Promise<void>> {
  if (config.CARD_SERVICE_URL !== undefined && !config.BOT_ENABLED) {
    throw new ConfigError('CARD_SERVICE_URL (remote mode) runs the bot in front of that service: BOT_ENABLED=false leaves nothing to run');
  }
  const token = config.BOT_ENABLED ? requireBotToken(config) : undefined;
  // Before anything is opened or created (the database file, a new card-data key): a port that cannot be listened on.
  await refuseUnusablePorts(config);
  // Before the database: a Redis that cannot be reached stops the start with nothing else touched.
  const redis =
    config.REDIS_URL === undefined
      ? undefined
      : await connectRedis(config.REDIS_URL, { keyPrefix: config.REDIS_KEY_PREFIX, commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS });
  if (redis) logger.info({ redis: redisAddress(config.REDIS_URL!) }, 'Rate limits counted in Redis, shared by every instance');
  const runtime = await startCoreFromConfig(config, logger).catch(async (error: unknown) => {
    if (redis) await closeRedis(redis);
    throw error;
  });
  // A failed flush of the SQLite log leaves nothing that can be made durable: every write and read now
  // fails, so the process exits for its supervisor to restart it (systemd's Restart=on-failure).
  void runtime.database.durabilityLost?.then((error) => {
    logger.fatal({ err: loggableError(error) }, 'The database log could not be flushed: nothing more can be made durable; exiting');
    process.exit(1);
  });
  const housekeeping = startHousekeeping(runtime, logger);
  // With Lithic behind the core: the cardholders' answers to its 3-D Secure challenges sent back to it (sending
  // one twice is harmless: Lithic answers an answered challenge 422, taken as done).
  const threeDsAnswers = runtime.lithic
    ? startThreeDsAnswers({ db: runtime.database.db, clock: runtime.clock }, lithicThreeDsResponder(runtime.lithic), logger)
    : undefined;
  // The HTTP server runs for the API or for the bot's webhook: its Idempotency-Key replies are purged here.
  const servesHttp = config.HTTP_ENABLED || (token !== undefined && config.BOT_MODE === 'webhook');
  const idempotencyPurge = servesHttp ? startIdempotencyPurge(runtime, logger) : undefined;
  const remote = config.CARD_SERVICE_URL === undefined ? undefined : startRemoteMode(config, runtime, logger, redis);
  const webApp = webAppOf(runtime, config, remote);
  // One registry for whatever runs here (the bot, the API or both), served on a listener of its own.
  const registry = config.METRICS_PORT === undefined ? undefined : metricsRegistry();
  if (registry && runtime.database.sharing) poolMetrics(registry, runtime.database.sharing);
  let metrics: MetricsListener | undefined;
  let api: RunningHttpApi | undefined;
  let bot: RunningBot | undefined;
  // For /readyz: the bot of this process is ready once it has started (getMe answered), and while Telegram answers it.
  const telegram = telegramHealth();
  const botReady = token === undefined ? undefined : () => bot !== undefined && telegram.connected();
  const httpApi: HttpApiOptions = { runtime, config, logger, botReady, redis, remote, registry, webApp };
  // No more scrapes, then in-flight work (HTTP requests and webhook updates, then polled updates), the database and Redis last.
  const stop = async () => {
    await metrics?.close();
    await api?.close();
    await idempotencyPurge?.stop();
    await bot?.stop();
    await remote?.stop();
    await threeDsAnswers?.stop();
    await housekeeping.stop();
    await runtime.close();
    if (redis) await closeRedis(redis);
  };
  try {
    if (token !== undefined && config.BOT_MODE === 'webhook') {
      const url = config.WEBHOOK_URL;
      const path = new URL(url).pathname;
      bot = await startWebhookBot(botDeps(runtime, config, token, logger, redis, remote, registry), {
        url,
        secretToken: config.WEBHOOK_SECRET,
        serve: async (handler) => {
          api = await startHttpApi({
            ...httpApi,
            mount: (app) => {
              app.post(path, { config: { public: true, webhook: true }, bodyLimit: 1_048_576, schema: { hide: true } }, handler);
            },
          });
        },
      });
      bot.bot.api.config.use(telegram.transformer);
      // Not the path: it may carry a secret.
      logger.info('bot serving its webhook');
    } else {
      if (config.HTTP_ENABLED) api = await startHttpApi(httpApi);
      if (token !== undefined) {
        bot = await startBot(botDeps(runtime, config, token, logger, redis, remote, registry));
        bot.bot.api.config.use(telegram.transformer);
      }
    }
    if (registry) {
      metrics = await serveMetrics(registry, config.METRICS_HOST, config.METRICS_PORT!, logger);
      logger.info({ url: metrics.url }, 'Metrics listening');
    }
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  return stop;
}

/**
 * Runs the service as the settings say until a signal stops it: `npm start` (the bot and the HTTP API)
 * and `npm run api` (`BOT_ENABLED=false`) both come here. A bad setting or card-data key exits with 2, a failed start with 1.
 */
export async function runService(overrides: NodeJS.ProcessEnv = {}): Promise<void> {
  loadDotEnv();
  let config: Config;
  try {
    config = loadConfig({ ...process.env, ...overrides });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(2);
  }
  const logger = createLogger(config.LOG_LEVEL, processLogDestination());
  try {
    stopOnSignals(await start(config, logger), logger);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof CardDataKeyError || error instanceof RedisUnreachableError)
      logger.fatal(error.message);
    else logger.fatal({ err: loggableError(error) }, 'Could not start');
    // A missing or wrong card-data key is fixed like a bad setting, by the operator: exit code 2.
    process.exit(error instanceof CardDataKeyError ? 2 : 1);
  }
}
