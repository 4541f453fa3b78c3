import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startCore, type CoreRuntime } from '../src/app/compose.js';
import type { Caller } from '../src/core/operations/views.js';
import { FakeClock } from '../src/infra/clock.js';
import { freshPostgresSchema } from '../test/core/dialects.js';
import { postgresReachable, postgresUrl } from './postgres.js';

// The authorization engine's decision latency (issue 33): `CONCURRENT` decisions asked at once in process,
// each on its own card (half of them with a daily limit, so the spending is read), beside as many top-ups
// asked the same way in the same run (the top-up is the core's fastest money movement, the baseline).
// SQLite on a file (WAL, each commit flushed, the group commit sharing commits) and Postgres when one
// answers (`BENCH_DATABASE_URL`, else `TEST_DATABASE_URL`, else the local server).
// Targets: decision p99 <= 5 ms on SQLite, <= 10 ms on Postgres. Asked all at once, a decision's latency
// is mostly its wait behind the others on its store (SQLite's one writer, the Postgres pool), so the run
// also prints each one alone (one at a time, the same cards) and the cost of one in the crowd (a round's
// time over its decisions).

const CONCURRENT = Number(process.env.BENCH_CONCURRENT_DECISIONS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const KEY = Buffer.alloc(32, 7);
const TARGET_P99_MS = { SQLite: 5, Postgres: 10 } as const;

interface Fixture {
  runtime: CoreRuntime;
  clock: FakeClock;
  caller: Caller;
  cardIds: string[];
}

async function fixture(databaseUrl: string): Promise<Fixture> {
  const clock = new FakeClock('2026-03-01T12:00:00.000Z');
  const runtime = await startCore({ databaseUrl, cardDataKey: KEY, clock, poolSize: 20, settings: { topupCooldownSeconds: 1 } });
  const { token } = await runtime.admin.createUser({ name: 'Bench', deposit: 1_000_000_000_000 });
  const caller = await runtime.core.authenticate(token);
  const plan = await runtime.admin.addPlan({ name: 'Bench', description: 'no practical limit', limit: 1_000_000_000_000, creationFee: 0 });
  const bin = (await runtime.core.listBins()).find((b) => !b.wallet && b.initialBalance === 0)!;
  const cardIds: string[] = [];
  for (let i = 0; i < CONCURRENT; i++) {
    const card = await runtime.core.createCard(caller, { bin_id: bin.id, planId: plan.id, name: `Bench ${i}` });
    await runtime.core.topup(caller, card.id, { amount: 1_000_000 });
    if (i % 2 === 0) await runtime.database.db.updateTable('cards').set({ daily_limit: 1_000_000_000 }).where('id', '=', card.id).execute();
    cardIds.push(card.id);
  }
  return { runtime, clock, caller, cardIds };
}

/** Each card's call one after the other; the latency of each, in ms. */
async function oneAtATime(f: Fixture, call: (cardId: string, i: number) => Promise<unknown>): Promise<number[]> {
  const latencies: number[] = [];
  for (const [i, cardId] of f.cardIds.entries()) {
    const started = performance.now();
    await call(cardId, i);
    latencies.push(performance.now() - started);
  }
  return latencies;
}

/** Each card's call asked at once; the latency of each, in ms. */
async function atOnce(f: Fixture, call: (cardId: string, i: number) => Promise<unknown>): Promise<number[]> {
  return Promise.all(
    f.cardIds.map(async (cardId, i) => {
      const started = performance.now();
      await call(cardId, i);
      return performance.now() - started;
    }),
  );
}

const decide = (f: Fixture) => (cardId: string, i: number) =>
  f.runtime.core.authorize({
    cardId,
    amount: 100 + (i % 900),
    currency: 'USD',
    merchant: { name: `Shop ${i % 17}`, mcc: i % 3 === 0 ? '5411' : '5999', country: 'US' },
    kind: 'purchase',
    providerTransactionId: randomUUID(),
  });

const topUp = (f: Fixture) => (cardId: string, i: number) => f.runtime.core.topup(f.caller, cardId, { amount: 500 + (i % 100) });

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

function figures(latencies: number[]): { p50: number; p99: number } {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
}

async function measure(dialect: keyof typeof TARGET_P99_MS, databaseUrl: string): Promise<void> {
  const f = await fixture(databaseUrl);
  try {
    const decisions: number[] = [];
    const topups: number[] = [];
    const alone = { decisions: [] as number[], topups: [] as number[] };
    const crowd = { decisions: 0, topups: 0 };
    // A warm-up round each (compiled statements, pool connections), then interleaved rounds.
    await atOnce(f, decide(f));
    f.clock.advance(2_000);
    await atOnce(f, topUp(f));
    for (let round = 0; round < ROUNDS; round++) {
      let started = performance.now();
      decisions.push(...(await atOnce(f, decide(f))));
      crowd.decisions += performance.now() - started;
      f.clock.advance(2_000);
      started = performance.now();
      topups.push(...(await atOnce(f, topUp(f))));
      crowd.topups += performance.now() - started;
      alone.decisions.push(...(await oneAtATime(f, decide(f))));
      f.clock.advance(2_000);
      alone.topups.push(...(await oneAtATime(f, topUp(f))));
      f.clock.advance(2_000);
    }
    const ledger = await f.runtime.admin.checkLedger();
    if (ledger.differences.length > 0 || ledger.total !== 0) throw new Error('the ledger does not reconcile after the bench');
    const ms = (n: number) => `${n.toFixed(2)} ms`;
    const line = (what: string, latencies: number[], base: number[]) => {
      const own = figures(latencies);
      const raw = figures(base);
      return `${what} p50 ${ms(own.p50)}  p99 ${ms(own.p99)}  (${(own.p99 / raw.p99).toFixed(2)}x the top-up's p99 ${ms(raw.p99)})`;
    };
    const target = TARGET_P99_MS[dialect];
    const aloneP99 = figures(alone.decisions).p99;
    console.log(`${dialect}: ${CONCURRENT} cards, ${ROUNDS} rounds (${decisions.length} decisions and top-ups each way)`);
    console.log(`  one at a time:  authorize ${line('', alone.decisions, alone.topups)}`);
    console.log(`  ${CONCURRENT} at once:   authorize ${line('', decisions, topups)}`);
    console.log(
      `  cost of one in the crowd: authorize ${ms(crowd.decisions / decisions.length)}, top-up ${ms(crowd.topups / topups.length)} (a round's time over its operations)`,
    );
    console.log(
      `  target p99 <= ${target} ms: one at a time ${aloneP99 <= target ? 'met' : 'MISSED'}; all at once ${figures(decisions).p99 <= target ? 'met' : 'MISSED'}`,
    );
  } finally {
    await f.runtime.close();
  }
}

export default async function (): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cards-bench-authorize-'));
  try {
    await measure('SQLite', path.join(dir, 'authorize.db'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (!(await postgresReachable(postgresUrl))) {
    console.log(`Postgres: no server answers at ${new URL(postgresUrl).host}; SQLite only`);
    return;
  }
  const schema = await freshPostgresSchema(postgresUrl);
  try {
    await measure('Postgres', schema.url);
  } finally {
    await schema.drop();
  }
}
