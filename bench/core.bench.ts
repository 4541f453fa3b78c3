import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type BetterSqlite3 from 'better-sqlite3';
import { newRecordId } from '../src/core/ids.js';
import { startCore, type CoreRuntime } from '../src/app/compose.js';
import { FakeClock } from '../src/infra/clock.js';
import { openSqlite } from '../src/db/database.js';
import type { Caller } from '../src/core/operations/views.js';

// Core top-up and card-read throughput on a file database (WAL), each beside raw better-sqlite3 doing the
// same writes and reads in the same run. Both wait for the disk before a top-up counts as done: raw with
// synchronous=FULL (SQLite flushes at each commit), the core with its own flush after the commit
// (`sqliteDialect`'s `flush`).
// Targets: core top-up one at a time >= 60 % of raw, card read >= 50 % of raw; top-ups of many
// callers at once (group commit: many share one commit) >= 2x raw, which commits each one alone.

const TOPUPS = Number(process.env.BENCH_TOPUPS ?? 2_000);
const READS = Number(process.env.BENCH_READS ?? 20_000);
const ROUNDS = 3;
/** Callers topping up at once (each its own card), for the group commit. */
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 64);
const KEY = Buffer.alloc(32, 7);

interface Fixture {
  runtime: CoreRuntime;
  clock: FakeClock;
  caller: Caller;
  cardId: string;
  /** More cards of the caller, one for each concurrent top-up loop. */
  cardIds: string[];
  file: string;
}

/** A core on its own file with one user, a big wallet and one card on a plan with a high limit. */
async function fixture(dir: string, name: string): Promise<Fixture> {
  const clock = new FakeClock('2026-03-01T12:00:00.000Z');
  const file = path.join(dir, `${name}.db`);
  const runtime = await startCore({ databaseUrl: file, cardDataKey: KEY, clock, settings: { topupCooldownSeconds: 1 } });
  const { token } = await runtime.admin.createUser({ name, deposit: 1_000_000_000_000 });
  const caller = await runtime.core.authenticate(token);
  const plan = await runtime.admin.addPlan({ name: 'Bench', description: 'no practical limit', limit: 1_000_000_000_000, creationFee: 0 });
  const bin = (await runtime.core.listBins()).find((b) => !b.wallet && b.initialBalance === 0)!;
  const card = await runtime.core.createCard(caller, { bin_id: bin.id, planId: plan.id, name: 'Bench' });
  const cardIds: string[] = [];
  for (let i = 0; i < CONCURRENT; i++)
    cardIds.push((await runtime.core.createCard(caller, { bin_id: bin.id, planId: plan.id, name: `Bench ${i}` })).id);
  return { runtime, clock, caller, cardId: card.id, cardIds, file };
}

async function coreTopups(f: Fixture, n: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    f.clock.advance(1_000);
    await f.runtime.core.topup(f.caller, f.cardId, { amount: 500 + (i % 100) });
  }
  return n / ((performance.now() - started) / 1000);
}

/** `n` top-ups made by one loop per card at once: the group commit lets those under way share a commit. */
async function concurrentCoreTopups(f: Fixture, n: number): Promise<number> {
  const each = Math.ceil(n / f.cardIds.length);
  const started = performance.now();
  await Promise.all(
    f.cardIds.map(async (cardId) => {
      for (let i = 0; i < each; i++) {
        f.clock.advance(1_000);
        await f.runtime.core.topup(f.caller, cardId, { amount: 500 + (i % 100) });
      }
    }),
  );
  return (each * f.cardIds.length) / ((performance.now() - started) / 1000);
}

async function coreReads(f: Fixture, n: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) await f.runtime.core.getCard(f.caller, f.cardId);
  return n / ((performance.now() - started) / 1000);
}

/** The top-up's write set by hand: the same conditional updates, journal, entries and statement line. */
function rawTopup(db: BetterSqlite3.Database) {
  const s = {
    begin: db.prepare('begin immediate'),
    commit: db.prepare('commit'),
    rollback: db.prepare('rollback'),
    claim: db.prepare(
      `update cards set last_topup_attempt_at = ? where id = ? and user_id = ?
       and (last_topup_attempt_at is null or last_topup_attempt_at <= ?)
       returning account_id, status, category, deposit, limit_amount, currency`,
    ),
    fee: db.prepare('select percent_bps, fixed_amount from platform_fees where category = ?'),
    revenue: db.prepare("select id from accounts where code = 'platform:revenue'"),
    move: db.prepare(
      `update accounts set balance = balance + ?, updated_at = ? where id = ?
       and (kind = 'system' or balance + ? >= 0) returning balance`,
    ),
    journal: db.prepare('insert into journals (reference, kind, created_at) values (?, ?, ?) returning id'),
    entry: db.prepare('insert into entries (journal_id, account_id, amount) values (?, ?, ?), (?, ?, ?), (?, ?, ?)'),
    deposit: db.prepare('update cards set deposit = deposit + ?, updated_at = ? where id = ?'),
    line: db.prepare(
      `insert into card_transactions (id, card_id, user_id, card_position, journal_id, status, side, amount, currency, type,
       merchant_name, original_amount, original_currency, decline_code, created_at, updated_at)
       values (?, ?, ?, coalesce((select last_position from card_transaction_counts where user_id = ? and card_id = ?), 0) + 1,
       ?, 'Approved', 'Credit', ?, ?, 'topup', 'Wallet top-up', ?, ?, null, ?, ?)`,
    ),
  };
  const revenue = (s.revenue.get() as { id: number }).id;
  return (caller: Caller, cardId: string, amount: number, now: Date) => {
    const at = now.toISOString();
    const threshold = new Date(now.getTime() - 1_000).toISOString();
    s.begin.run();
    try {
      const card = s.claim.get(at, cardId, caller.userId, threshold) as
        | { account_id: number; deposit: number; limit_amount: number; category: string; currency: string }
        | undefined;
      if (!card || card.deposit + amount > card.limit_amount) throw new Error('refused');
      const f = s.fee.get(card.category) as { percent_bps: number; fixed_amount: number };
      const fee = Math.floor((amount * f.percent_bps + 5000) / 10000) + f.fixed_amount;
      const total = amount + fee;
      const wallet = s.move.get(-total, at, caller.walletAccountId, -total) as { balance: number } | undefined;
      if (!wallet) throw new Error('refused');
      const cardBalance = s.move.get(amount, at, card.account_id, amount) as { balance: number };
      s.move.get(fee, at, revenue, fee);
      const transactionId = newRecordId(); // the core's ids, for the same index locality
      const { id: journalId } = s.journal.get(`topup:${transactionId}`, 'topup', at) as { id: number };
      s.entry.run(journalId, caller.walletAccountId, -total, journalId, card.account_id, amount, journalId, revenue, fee);
      s.deposit.run(amount, at, cardId);
      const { userId } = caller; // and again with the card, for its position
      s.line.run(transactionId, cardId, userId, userId, cardId, journalId, amount, card.currency, amount, card.currency, at, at);
      s.commit.run();
      return { walletBalance: wallet.balance, newCardBalance: cardBalance.balance, journalId };
    } catch (error) {
      s.rollback.run();
      throw error;
    }
  };
}

function rawTopups(f: Fixture, db: BetterSqlite3.Database, n: number): number {
  const topup = rawTopup(db);
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    f.clock.advance(1_000);
    topup(f.caller, f.cardId, 500 + (i % 100), f.clock.now());
  }
  return n / ((performance.now() - started) / 1000);
}

function rawReads(f: Fixture, db: BetterSqlite3.Database, n: number): number {
  const read = db.prepare(
    `select cards.*, accounts.balance from cards inner join accounts on accounts.id = cards.account_id
     where cards.id = ? and cards.user_id = ?`,
  );
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    const row = read.get(f.cardId, f.caller.userId) as { address: string; balance: number } | undefined;
    if (!row) throw new Error('card missing');
    JSON.parse(row.address);
  }
  return n / ((performance.now() - started) / 1000);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

export default async function (): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cards-bench-'));
  try {
    const core = await fixture(dir, 'core');
    const raw = await fixture(dir, 'raw');
    const rawDb = openSqlite(raw.file);
    const best = { coreTopup: 0, rawTopup: 0, batchedTopup: 0, coreRead: 0, rawRead: 0 };
    const batched = { commits: 0, operations: 0 };
    // Interleaved rounds, best of each: the same disk and CPU conditions for both sides.
    for (let round = 0; round < ROUNDS; round++) {
      best.rawTopup = Math.max(best.rawTopup, rawTopups(raw, rawDb, TOPUPS));
      best.coreTopup = Math.max(best.coreTopup, await coreTopups(core, TOPUPS));
      const before = { ...core.runtime.database.groupCommit! };
      best.batchedTopup = Math.max(best.batchedTopup, await concurrentCoreTopups(core, TOPUPS * 2));
      batched.commits += core.runtime.database.groupCommit!.commits - before.commits;
      batched.operations += core.runtime.database.groupCommit!.operations - before.operations;
      best.rawRead = Math.max(best.rawRead, rawReads(raw, rawDb, READS));
      best.coreRead = Math.max(best.coreRead, await coreReads(core, READS));
    }
    const ledger = await core.runtime.admin.checkLedger();
    if (ledger.differences.length > 0 || ledger.total !== 0) throw new Error('the core ledger does not balance after the bench');

    console.log(`top-up (WAL, each flushed before it counts, ${TOPUPS} x ${ROUNDS}, best round)`);
    console.log(`  raw better-sqlite3  ${fmt(best.rawTopup)} ops/s`);
    console.log(
      `  core                ${fmt(best.coreTopup)} ops/s  = ${((100 * best.coreTopup) / best.rawTopup).toFixed(0)} % of raw (target >= 60 %)`,
    );
    console.log(
      `  core, ${CONCURRENT} at once  ${fmt(best.batchedTopup)} ops/s  = ${(best.batchedTopup / best.rawTopup).toFixed(2)}x raw (target >= 2x); ${(batched.operations / batched.commits).toFixed(1)} top-ups a commit on average`,
    );
    console.log(`card read (getCard, ${READS} x ${ROUNDS}, best round)`);
    console.log(`  raw better-sqlite3  ${fmt(best.rawRead)} ops/s`);
    console.log(
      `  core                ${fmt(best.coreRead)} ops/s  = ${((100 * best.coreRead) / best.rawRead).toFixed(0)} % of raw (target >= 50 %)`,
    );

    rawDb.close();
    await core.runtime.close();
    await raw.runtime.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
