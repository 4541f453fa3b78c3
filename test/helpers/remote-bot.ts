import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type CoreRuntime, startCore } from '../../src/app/compose.js';
import { type Config, loadConfig } from '../../src/app/config.js';
import { type RemoteMode, startRemoteMode } from '../../src/app/remote-mode.js';
import type { RunningBot } from '../../src/bot/runtime/running-bot.js';
import { startBot } from '../../src/bot/runtime/start-polling.js';
import type { BotConfig } from '../../src/bot/services.js';
import { systemClock } from '../../src/infra/clock.js';
import type { Logger } from '../../src/infra/logger.js';
import { BotApiServer } from './bot-api-server.js';
import { TEST_CARD_DATA_KEY } from './core.js';

/** The bot in remote mode as `npm start` builds it with CARD_SERVICE_URL set, over the Bot API test server. */
export interface RemoteBot {
  /** The folder of the bot's own SQLite database (`bot.db`). */
  dir: string;
  server: BotApiServer;
  runtime: CoreRuntime;
  remote: RemoteMode;
  config: Config;
  running: RunningBot;
  /** Stops the bot, its polls, its database and the Bot API server, and removes the folder. */
  stop(): Promise<void>;
}

/**
 * Starts a bot in front of the card service at `serviceUrl`. `settings` are more environment settings
 * (CARD_SERVICE_TIMEOUT_MS, WEBAPP_URL, …); `bot` overrides the bot's own configuration; `beforeBot` runs
 * once remote mode is up and before the bot starts (a Mini App server that needs its port, say).
 */
export async function startRemoteBot(options: {
  serviceUrl: string;
  logger: Logger;
  settings?: Record<string, string>;
  bot?: Partial<BotConfig>;
  beforeBot?: (started: { runtime: CoreRuntime; remote: RemoteMode; config: Config }) => Promise<void>;
}): Promise<RemoteBot> {
  const dir = mkdtempSync(path.join(tmpdir(), 'remote-bot-'));
  const server = new BotApiServer();
  const apiRoot = await server.start();
  const runtime = await startCore({ databaseUrl: path.join(dir, 'bot.db'), cardDataKey: TEST_CARD_DATA_KEY, clock: systemClock });
  const config = loadConfig({ CARD_SERVICE_URL: options.serviceUrl, CARD_SERVICE_TIMEOUT_MS: '5000', ...options.settings });
  const remote = startRemoteMode(config, runtime, options.logger);
  await options.beforeBot?.({ runtime, remote, config });
  const running = await startBot({
    cards: remote.cards,
    cipher: runtime.cipher,
    db: runtime.database.db,
    clock: systemClock,
    logger: options.logger,
    config: {
      token: '123456:REMOTE-test',
      apiRoot,
      sensitiveTtlSeconds: 60,
      otpTtlSeconds: 60,
      pollIntervalMs: 100,
      rateLimit: false,
      ...options.bot,
    },
  });
  return {
    dir,
    server,
    runtime,
    remote,
    config,
    running,
    async stop() {
      await running.stop();
      await remote.stop();
      await runtime.close();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
