import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startCore, type CoreRuntime } from '../src/app/compose.js';
import { FakeClock } from '../src/infra/clock.js';
import { createCardDataCipher } from '../src/core/keys/secrets.js';
import type { Caller } from '../src/core/operations/views.js';
import { freshPostgresSchema } from '../test/core/dialects.js';
import { postgresReachable, postgresUrl } from './postgres.js';
import { seedBenchData, type SeedReport } from './seed.js';

// Latency with data: core top-up, card read and a card's transactions pages on a database holding
// 100,000 cards and 1,000,000 transactions (bench/seed.ts), beside the same on an empty one (one user,
// their cards and a few pages of transactions), in the same run: on a SQLite file, then on Postgres
// (`BENCH_DATABASE_URL`, else `TEST_DATABASE_URL`, else the local server; a schema of its own for each
// database, dropped at the end) when one answers. Target: each seeded p50 within 1.5x of its
// empty-database p50 on the same dialect. Smaller trials: BENCH_SEED_CARDS, BENCH_SEED_TRANSACTIONS.

const SEED_CARDS = Number(process.env.BENCH_SEED_CARDS ?? 100_000);
const SEED_TRANSACTIONS = Number(process.env.BENCH_SEED_TRANSACTIONS ?? 1_000_000);
/** The measured card's own statement: thousands on the seeded database, ten pages of 20 on the empty one. */
const SEEDED_CARD_TRANSACTIONS = Number(process.env.BENCH_SEED_CARD_TRANSACTIONS ?? 5_000);
const EMPTY_CARD_TRANSACTIONS = 200;
const LATER_PAGE = 10;
const PAGE_SIZE = 20;
const TOPUPS = Number(process.env.BENCH_TOPUPS ?? 500);
const READS = Number(process.env.BENCH_READS ?? 5_000);
const PAGES = Number(process.env.BENCH_PAGES ?? 1_000);
const ROUNDS = 5;
const TARGET = 1.5;
const KEY = Buffer.alloc(32, 7);
const START = '2026-03-01T12:00:00.000Z';

interface Fixture {
  runtime: CoreRuntime;
  clock: FakeClock;
  caller: Caller;
  /** Read and listed, never topped up: its statement keeps the size it was seeded with. */
  readCardId: string;
  topupCardId: string;
  /** The read card's last page of `PAGE_SIZE` lines. */
  lastPage: number;
  seed: SeedReport;
}

/**
 * A core on its own database (a SQLite file or a Postgres schema): one user (made through the core) with
 * a big wallet and two cards on a plan with a high limit, then the seed around them (none for the empty
 * database) and the read card's statement.
 */
async function fixture(
  databaseUrl: string,
  name: string,
  background: { cards: number; transactions: number },
  own: number,
): Promise<Fixture> {
  const clock = new FakeClock(START);
  const options = { databaseUrl, cardDataKey: KEY, clock, settings: { topupCooldownSeconds: 1 } };
  const first = await startCore(options);
  const { token } = await first.admin.createUser({ name, deposit: 1_000_000_000_000 });
  const plan = await first.admin.addPlan({ name: 'Bench', description: 'no practical limit', limit: 1_000_000_000_000, creationFee: 0 });
  const bin = (await first.core.listBins()).find((b) => !b.wallet && b.initialBalance === 0)!;
  const owner = await first.core.authenticate(token);
  const readCard = await first.core.createCard(owner, { bin_id: bin.id, planId: plan.id, name: 'Read' });
  const topupCard = await first.core.createCard(owner, { bin_id: bin.id, planId: plan.id, name: 'Top-up' });
  await first.close();
  const seed = await seedBenchData(databaseUrl, {
    ...background,
    focus: { cardId: readCard.id, transactions: own },
    cipher: createCardDataCipher(KEY),
    until: clock.now(),
  });
  const runtime = await startCore(options);
  return {
    runtime,
    clock,
    caller: await runtime.core.authenticate(token),
    readCardId: readCard.id,
    topupCardId: topupCard.id,
    lastPage: Math.ceil(own / PAGE_SIZE),
    seed,
  };
}

interface Figures {
  p50: number;
  p99: number;
  opsPerSecond: number;
}

async function measure(n: number, operation: (i: number) => Promise<unknown>): Promise<Figures> {
  const samples = new Float64Array(n);
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await operation(i);
    samples[i] = performance.now() - t;
  }
  const elapsed = performance.now() - started;
  samples.sort();
  const at = (q: number) => samples[Math.min(n - 1, Math.floor(q * n))]! * 1000;
  return { p50: at(0.5), p99: at(0.99), opsPerSecond: n / (elapsed / 1000) };
}

/** The best of each figure over the rounds: what the code costs when the machine's other work leaves it alone. */
function best(a: Figures | undefined, b: Figures): Figures {
  if (!a) return b;
  return { p50: Math.min(a.p50, b.p50), p99: Math.min(a.p99, b.p99), opsPerSecond: Math.max(a.opsPerSecond, b.opsPerSecond) };
}

const OPERATIONS: { name: string; n: number; run: (f: Fixture, i: number) => Promise<unknown> }[] = [
  {
    name: 'top-up',
    n: TOPUPS,
    run: (f, i) => {
      f.clock.advance(1_000);
      return f.runtime.core.topup(f.caller, f.topupCardId, { amount: 500 + (i % 100) });
    },
  },
  { name: 'card read (getCard)', n: READS, run: (f) => f.runtime.core.getCard(f.caller, f.readCardId) },
  {
    name: 'card transactions, page 1',
    n: PAGES,
    run: (f) => f.runtime.core.listTransactions(f.caller, { card_id: f.readCardId, page: 1, limit: PAGE_SIZE }),
  },
  {
    name: `card transactions, page ${LATER_PAGE}`,
    n: PAGES,
    run: (f) => f.runtime.core.listTransactions(f.caller, { card_id: f.readCardId, page: LATER_PAGE, limit: PAGE_SIZE }),
  },
  {
    // The page that skips the most lines (in an index): half the statement, read from either end.
    name: 'card transactions, middle page',
    n: PAGES,
    run: (f) => f.runtime.core.listTransactions(f.caller, { card_id: f.readCardId, page: Math.ceil(f.lastPage / 2), limit: PAGE_SIZE }),
  },
  {
    name: 'card transactions, last page',
    n: PAGES,
    run: (f) => f.runtime.core.listTransactions(f.caller, { card_id: f.readCardId, page: f.lastPage, limit: PAGE_SIZE }),
  },
  {
    name: 'all transactions, page 1',
    n: PAGES,
    run: (f) => f.runtime.core.listTransactions(f.caller, { page: 1, limit: PAGE_SIZE }),
  },
];

const us = (n: number) => `${n.toFixed(0).padStart(5)} µs`;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** The seeded and the empty database of one dialect, measured in interleaved rounds; prints a row per operation. */
async function compare(label: string, databaseUrl: (name: string) => Promise<string>): Promise<void> {
  const empty = await fixture(await databaseUrl('empty'), 'empty', { cards: 0, transactions: 0 }, EMPTY_CARD_TRANSACTIONS);
  try {
    const seeded = await fixture(
      await databaseUrl('seeded'),
      'seeded',
      { cards: SEED_CARDS, transactions: SEED_TRANSACTIONS },
      SEEDED_CARD_TRANSACTIONS,
    );
    try {
      const { seed } = seeded;
      console.log(
        `${label}: seeded ${fmt(seed.cards)} cards of ${fmt(seed.users)} users, ${fmt(seed.transactions)} transactions ` +
          `(${fmt(seed.journals)} journals) in ${seed.seconds.toFixed(1)} s; the measured card holds ${fmt(SEEDED_CARD_TRANSACTIONS)} ` +
          `of them (${fmt(EMPTY_CARD_TRANSACTIONS)} on the empty database)`,
      );

      const figures = OPERATIONS.map(() => ({ empty: undefined as Figures | undefined, seeded: undefined as Figures | undefined }));
      // Interleaved rounds, each side first in turn, best of each: the same disk and CPU conditions for both.
      for (let round = 0; round < ROUNDS; round++) {
        for (const [index, op] of OPERATIONS.entries()) {
          const sides = round % 2 === 0 ? (['empty', 'seeded'] as const) : (['seeded', 'empty'] as const);
          for (const side of sides) {
            const f = side === 'empty' ? empty : seeded;
            figures[index]![side] = best(figures[index]![side], await measure(op.n, (i) => op.run(f, i)));
          }
        }
      }

      console.log(
        `${label}: p50 / p99 latency and throughput, best of ${ROUNDS} interleaved rounds; target: seeded p50 <= ${TARGET}x empty`,
      );
      for (const [index, op] of OPERATIONS.entries()) {
        const e = figures[index]!.empty!;
        const s = figures[index]!.seeded!;
        const ratio = s.p50 / e.p50;
        console.log(`${op.name} (${op.n} x ${ROUNDS})`);
        console.log(`  empty   p50 ${us(e.p50)}  p99 ${us(e.p99)}  ${fmt(e.opsPerSecond)} ops/s`);
        console.log(
          `  seeded  p50 ${us(s.p50)}  p99 ${us(s.p99)}  ${fmt(s.opsPerSecond)} ops/s  = ${ratio.toFixed(2)}x empty p50` +
            ` (p99 ${(s.p99 / e.p99).toFixed(2)}x)${ratio <= TARGET ? '' : `  OVER ${TARGET}x`}`,
        );
      }
    } finally {
      await seeded.runtime.close();
    }
  } finally {
    await empty.runtime.close();
  }
}

export default async function (): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cards-bench-data-'));
  try {
    await compare('SQLite', async (name) => path.join(dir, `${name}.db`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  if (!(await postgresReachable(postgresUrl))) {
    console.log(`Postgres: no server answers at ${new URL(postgresUrl).host}; SQLite only`);
    return;
  }
  const schemas: { drop(): Promise<void> }[] = [];
  try {
    await compare('Postgres', async () => {
      const schema = await freshPostgresSchema(postgresUrl);
      schemas.push(schema);
      return schema.url;
    });
  } finally {
    for (const schema of schemas) await schema.drop();
  }
}
