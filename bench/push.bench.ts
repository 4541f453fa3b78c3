import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createBot } from '../src/bot/index.js';
import { startBackgroundJobs } from '../src/bot/jobs/background-jobs.js';
import { startCore, type CoreRuntime } from '../src/app/compose.js';
import { createLogger } from '../src/infra/logger.js';
import { freshPostgresSchema } from '../test/core/dialects.js';
import { BotApiServer } from '../test/helpers/bot-api-server.js';
import { BOT_INFO, textUpdate } from '../test/helpers/updates.js';
import { type Figures, latencyFigures } from './latency.js';

// Push latency: from an OTP event's commit to the bot's sendMessage arriving at a local Bot API server
// (test/helpers/bot-api-server.ts), one event at a time, p50/p95.
// (a) SQLite (a file: WAL, each commit flushed), the event made in the bot's own process: woken in process.
// (b) Postgres, the event made by another core (its own connections, as the admin command line or
//     another instance would): only a NOTIFY can wake the bot. Run when BENCH_DATABASE_URL or
//     TEST_DATABASE_URL names a Postgres database.
// Baseline, in the same run: the same bot with the wake off, polling every 500 ms (as before the wake).
// The baseline's events come at random moments of the poll interval, so its figures are the poll's own.
// Target: p95 < 100 ms with the wake. `BENCH_PUSH_EVENTS` (200) and `BENCH_PUSH_BASELINE_EVENTS` (40) set the counts.

const EVENTS = Number(process.env.BENCH_PUSH_EVENTS ?? 200);
const BASELINE_EVENTS = Number(process.env.BENCH_PUSH_BASELINE_EVENTS ?? 40);
const POLL_MS = 500;
const CHAT = 4242;
const KEY = Buffer.alloc(32, 7);

/** Every run measures events, so its figures are there. */
const figures = (latencies: number[]): Figures => latencyFigures(latencies)!;

const ms = (v: number) => `${v < 10 ? v.toFixed(1) : Math.round(v)} ms`.padStart(8);
const line = (f: Figures) => `p50 ${ms(f.p50)}  p95 ${ms(f.p95)}  max ${ms(f.max)}  (${f.count} events)`;

/**
 * The bot over `bot` (a core), its chat linked, its background jobs started with the wake on or off;
 * `writer` makes the OTP events. Returns each event's latency.
 */
async function measure(bot: CoreRuntime, writer: CoreRuntime, wakeOnCommit: boolean, count: number): Promise<number[]> {
  const server = new BotApiServer();
  const apiRoot = await server.start();
  const instance = createBot(
    {
      core: bot.core,
      db: bot.database.db,
      clock: bot.clock,
      logger: createLogger('warn'),
      config: { token: '1:bench', apiRoot, sensitiveTtlSeconds: 60, otpTtlSeconds: 60, rateLimit: false, pollIntervalMs: POLL_MS },
    },
    { botInfo: BOT_INFO },
  );
  const { token } = await writer.admin.createUser({ name: 'Bench', deposit: 100_000 });
  const caller = await writer.core.authenticate(token);
  const bin = (await writer.core.listBins())[0]!;
  const plan = (await writer.core.listPlans())[0]!;
  const card = await writer.core.createCard(caller, { bin_id: bin.id, planId: plan.id, name: 'Bench' });
  await instance.handleUpdate(textUpdate({ id: CHAT }, `/link ${token}`));
  const jobs = startBackgroundJobs(instance, { wakeOnCommit });
  await jobs.listening;
  const latencies: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      // Events arrive at random moments: within the poll interval for the baseline, a few ms apart otherwise.
      await sleep(Math.random() * (wakeOnCommit ? 20 : POLL_MS));
      const mark = server.mark();
      const otp = await writer.admin.simulateOtp(card.id, 100, 'Bench shop');
      const committed = performance.now();
      await server.waitForCall(
        (c) => c.method === 'sendMessage' && Number(c.payload.chat_id) === CHAT && String(c.payload.text).includes(otp.code),
        mark,
        10_000,
        `the push of OTP ${otp.code}`,
      );
      latencies.push(performance.now() - committed);
    }
  } finally {
    await jobs.stop();
    await server.stop();
  }
  return latencies;
}

function report(label: string, wake: Figures, poll: Figures): void {
  console.log(`${label}`);
  console.log(`  ${'wake on commit'.padEnd(22)} ${line(wake)}`);
  console.log(`  ${`polling ${POLL_MS} ms (before)`.padEnd(22)} ${line(poll)}`);
  const ratio = (wake.p95 / poll.p95) * 100;
  console.log(`  p95 wake / polling: ${ratio.toFixed(1)}%   target p95 < 100 ms: ${wake.p95 < 100 ? 'ok' : 'NOT MET'}`);
}

export default async function (): Promise<void> {
  console.log('push latency: an OTP event committed → its sendMessage at a local Bot API server, one event at a time');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'push-bench-'));
  try {
    const sqlite = await startCore({ databaseUrl: path.join(dir, 'bench.db'), cardDataKey: KEY });
    try {
      const poll = figures(await measure(sqlite, sqlite, false, BASELINE_EVENTS));
      const wake = figures(await measure(sqlite, sqlite, true, EVENTS));
      report("SQLite file, the event made in the bot's process", wake, poll);
    } finally {
      await sqlite.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const postgresUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!postgresUrl) {
    console.log('Postgres: set BENCH_DATABASE_URL (or TEST_DATABASE_URL) for its figures; skipped');
    return;
  }
  const schema = await freshPostgresSchema(postgresUrl);
  try {
    const url = schema.url;
    const bot = await startCore({ databaseUrl: url, cardDataKey: KEY });
    const writer = await startCore({ databaseUrl: url, cardDataKey: KEY });
    try {
      const poll = figures(await measure(bot, writer, false, BASELINE_EVENTS));
      const wake = figures(await measure(bot, writer, true, EVENTS));
      report('Postgres, the event made over other connections (another core): woken by NOTIFY', wake, poll);
    } finally {
      await writer.close();
      await bot.close();
    }
  } finally {
    await schema.drop().catch(() => undefined);
  }
}
