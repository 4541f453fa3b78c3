import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { createBot } from '../../src/bot/index.js';
import { type BackgroundJobs, startBackgroundJobs } from '../../src/bot/jobs/background-jobs.js';
import type { CardsBot } from '../../src/bot/runtime/cards-bot.js';
import type { BotConfig } from '../../src/bot/services.js';
import { startCore, type CoreRuntime } from '../../src/app/compose.js';
import { FakeClock } from '../../src/infra/clock.js';
import { getOrCreate } from '../../src/infra/get-or-create.js';
import { capturedLogger } from '../helpers/log.js';
import { BOT_INFO } from '../helpers/updates.js';
import { freshPostgresSchema, whileNoSchemaIsDropped, type Dialect } from '../core/dialects.js';

/**
 * Several bot instances over one database, as several processes would run them: each with a core
 * of its own on Postgres (its own connections, its own fake clock), a bot talking to a local Bot API
 * server, and its own background jobs (its own claimant).
 */

/** A database several cores open, like processes do: a SQLite file, or a Postgres schema of its own. */
export interface SharedDatabase {
  dialect: Dialect;
  dir: string;
  url: string;
  keyFile: string;
  /** Runs `work` (a start, which migrates) while no test schema may be dropped (Postgres; see dialects.ts). */
  guard<T>(work: () => Promise<T>): Promise<T>;
}

export interface Instance {
  t: CoreRuntime & { clock: FakeClock };
  bot: CardsBot;
  log: () => string;
  /** Starts the bot's background jobs; stopped when the test ends unless stopped before. */
  start(options?: { wakeOnCommit?: boolean }): BackgroundJobs;
}

const cleanups = new WeakMap<TestContext, (() => unknown)[]>();

/** Runs `cleanup` when the test ends, the last one added first (jobs, then cores, then the database). */
function later(ctx: TestContext, cleanup: () => unknown): void {
  let stack = cleanups.get(ctx);
  if (!stack) {
    const added: (() => unknown)[] = [];
    cleanups.set(ctx, added);
    ctx.after(async () => {
      for (const run of added.reverse()) await run();
    });
    stack = added;
  }
  stack.push(cleanup);
}

export async function sharedDatabase(ctx: TestContext, dialect: Dialect): Promise<SharedDatabase> {
  const dir = mkdtempSync(path.join(tmpdir(), 'instances-'));
  later(ctx, () => rmSync(dir, { recursive: true, force: true }));
  const keyFile = path.join(dir, 'card-data.key');
  if (dialect === 'sqlite') return { dialect, dir, keyFile, url: path.join(dir, 'cards.db'), guard: (work) => work() };
  const baseUrl = process.env.TEST_DATABASE_URL!;
  const schema = await freshPostgresSchema(baseUrl);
  later(ctx, () => schema.drop());
  return { dialect, dir, keyFile, url: schema.url, guard: (work) => whileNoSchemaIsDropped(baseUrl, work) };
}

const sqliteCores = new WeakMap<SharedDatabase, Promise<CoreRuntime & { clock: FakeClock }>>();

/**
 * A core over the shared database, closed when the test ends: a core of its own on Postgres (its own
 * connections, as another process has). On SQLite every caller in a test gets the same one: two
 * connections to one file in one process would block each other (better-sqlite3 waits for a lock
 * synchronously, so the holder could never finish); separate processes each have their own.
 */
export function openCore(ctx: TestContext, db: SharedDatabase): Promise<CoreRuntime & { clock: FakeClock }> {
  const open = async () => {
    const clock = new FakeClock('2026-03-01T12:00:00.000Z');
    const runtime = await db.guard(() => startCore({ databaseUrl: db.url, cardDataKey: { file: db.keyFile }, clock }));
    later(ctx, () => runtime.close());
    return { ...runtime, clock };
  };
  if (db.dialect === 'postgres') return open();
  return getOrCreate(sqliteCores, db, open);
}

/** A bot instance (a core and a bot) over the shared database, its Bot API calls going to `apiRoot`. */
export async function startInstance(
  ctx: TestContext,
  db: SharedDatabase,
  apiRoot: string,
  config: Partial<BotConfig> = {},
): Promise<Instance> {
  const t = await openCore(ctx, db);
  const { logger, text } = capturedLogger('info');
  const bot = createBot(
    {
      core: t.core,
      db: t.database.db,
      clock: t.clock,
      logger,
      config: {
        token: '1:test',
        apiRoot,
        sensitiveTtlSeconds: 60,
        otpTtlSeconds: 60,
        rateLimit: false,
        pollIntervalMs: 20,
        ...config,
      },
    },
    { botInfo: BOT_INFO },
  );
  return {
    t,
    bot,
    log: text,
    start(options) {
      const jobs = startBackgroundJobs(bot, options);
      let stopped: Promise<void> | undefined;
      const stop = () => (stopped ??= jobs.stop());
      later(ctx, stop);
      return { listening: jobs.listening, stop };
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
