import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RunningBot } from '../../src/bot/runtime/running-bot.js';
import { startBot } from '../../src/bot/runtime/start-polling.js';
import type { BotConfig, BotDeps } from '../../src/bot/services.js';
import { type CoreRuntime, startCore } from '../../src/app/compose.js';
import { type Clock, systemClock } from '../../src/infra/clock.js';
import { createLogger } from '../../src/infra/logger.js';
import { BotApiServer } from './bot-api-server.js';
import { TEST_CARD_DATA_KEY } from './core.js';

/** A polling bot over real Bot API traffic: the Bot API test server, a core on a SQLite file in a temporary folder. */
export interface E2eBot {
  dir: string;
  server: BotApiServer;
  runtime: CoreRuntime;
  running: RunningBot;
  /** Stops the bot, the server and the core, and removes the folder. */
  stop(): Promise<void>;
}

/**
 * Starts an `E2eBot`; `config` overrides the test defaults (60 s TTLs, a 100 ms poll, no rate limit).
 * `options.clock`: the core's and the bot's time (a test that must step past a cooldown runs ahead of the wall
 * clock); `options.metrics`: the bot's metrics.
 */
export async function startE2eBot(
  name: string,
  config: Partial<BotConfig> = {},
  { clock = systemClock, ...deps }: { clock?: Clock } & Pick<BotDeps, 'metrics'> = {},
): Promise<E2eBot> {
  const dir = mkdtempSync(path.join(tmpdir(), `${name}-`));
  const server = new BotApiServer();
  const apiRoot = await server.start();
  const runtime = await startCore({ databaseUrl: path.join(dir, 'cards.db'), cardDataKey: TEST_CARD_DATA_KEY, clock });
  const running = await startBot({
    core: runtime.core,
    cipher: runtime.cipher,
    funding: runtime.funding,
    db: runtime.database.db,
    clock,
    logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
    ...deps,
    config: {
      token: '123456:TEST-token',
      apiRoot,
      sensitiveTtlSeconds: 60,
      otpTtlSeconds: 60,
      pollIntervalMs: 100,
      rateLimit: false,
      ...config,
    },
  });
  return {
    dir,
    server,
    runtime,
    running,
    async stop() {
      await running.stop();
      await server.stop();
      await runtime.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
