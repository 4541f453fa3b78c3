import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import Fastify, { type FastifyInstance } from 'fastify';
import { newRecordId } from '../src/core/ids.js';
import { createApiMetrics } from '../src/api/metrics.js';
import type { RateLimits } from '../src/api/rate-limits.js';
import { createHttpServer } from '../src/api/server.js';
import { startCore } from '../src/app/compose.js';
import { systemClock } from '../src/infra/clock.js';
import { hashToken } from '../src/core/keys/secrets.js';
import { openSqlite } from '../src/db/database.js';
import { createLogger, gatheredLogDestination } from '../src/infra/logger.js';

// The HTTP path against a bare Fastify route doing the same database work with raw better-sqlite3
// (same file, WAL, each top-up flushed before it is answered: the bare route with synchronous=FULL, the API
// with its own flush after each batch's commit), in the same run, 50 connections:
//   wallet-balance reads   target: API ≥ 60% of bare req/s
//   top-ups off cooldown   target: API ≥ 2 × bare req/s, API p99 ≤ bare p99 (the bare route commits each
//                          top-up alone; the API's group commit lets the top-ups under way share one)
// Top-ups run in mirrored order (bare, API, API, bare) so a growing database favours neither. Reads run in
// rounds, each side once a round, the order turning from round to round; the figure is the median of the rounds'
// API/bare ratios, so a host whose speed drifts (it moved 2x between slices on a shared host) weighs on both sides
// of each ratio alike. The load generator runs in a worker thread, so the servers have the main thread to themselves.

const CONNECTIONS = 50;
/** Seconds per measured slice of top-ups; `BENCH_API_SLICE_SECONDS` shortens or lengthens them. */
const SLICE_SECONDS = Number(process.env.BENCH_API_SLICE_SECONDS ?? 4);
/** Rounds of reads, each side one slice of `READ_SLICE_SECONDS` a round (`BENCH_API_READ_ROUNDS`). */
const READ_ROUNDS = Math.max(1, Math.floor(Number(process.env.BENCH_API_READ_ROUNDS ?? 15)) || 15);
const READ_SLICE_SECONDS = 2;
/** `BENCH_API_PART=reads` runs the wallet-balance reads only (repeated runs while working on the read path). */
const READS_ONLY = process.env.BENCH_API_PART === 'reads';
/** Enough cards that none comes round again within its 1 s cooldown, even at 10,000 top-ups a second. */
const CARDS = 20_000;
/**
 * One token at 50 connections is far over any sane per-token limit, so the request limits are off by
 * default: the figures stay comparable with runs from before there were limits. `BENCH_API_LIMITS=on`
 * turns them on, set far above what the run makes, to measure what their checks cost.
 */
const BENCH_LIMIT = 1_000_000_000;
const limits: RateLimits | undefined =
  process.env.BENCH_API_LIMITS === 'on'
    ? { perTokenPerMinute: BENCH_LIMIT, perAddressPerMinute: BENCH_LIMIT, authFailuresPerAddress: BENCH_LIMIT }
    : undefined;

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function listen(app: FastifyInstance): Promise<string> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/** The same statements the core runs for an authenticated wallet read and a top-up, by hand. */
function bareServer(file: string): FastifyInstance {
  const raw = openSqlite(file);
  const auth = raw.prepare(
    `select users.id as userId, users.wallet_account_id as walletAccountId from api_tokens
     inner join users on users.id = api_tokens.user_id where api_tokens.token_hash = ? and api_tokens.revoked_at is null`,
  );
  const wallet = raw.prepare(`select balance, updated_at from accounts where id = ? and kind = 'wallet'`);
  const begin = raw.prepare('begin immediate');
  const commit = raw.prepare('commit');
  const rollback = raw.prepare('rollback');
  const claim = raw.prepare(
    `update cards set last_topup_attempt_at = ? where id = ? and user_id = ?
     and (last_topup_attempt_at is null or last_topup_attempt_at <= ?)
     returning account_id, status, category, deposit, limit_amount, currency`,
  );
  const fee = raw.prepare('select percent_bps, fixed_amount from platform_fees where category = ?');
  const revenue = raw.prepare(`select id from accounts where code = 'platform:revenue'`).get() as { id: number };
  const move = raw.prepare(
    `update accounts set balance = balance + ?, updated_at = ? where id = ? and (kind = 'system' or balance + ? >= 0) returning balance`,
  );
  const journal = raw.prepare('insert into journals (reference, kind, created_at) values (?, ?, ?) returning id');
  const entries = raw.prepare('insert into entries (journal_id, account_id, amount) values (?, ?, ?), (?, ?, ?), (?, ?, ?)');
  const deposit = raw.prepare('update cards set deposit = deposit + ?, updated_at = ? where id = ?');
  const line = raw.prepare(
    `insert into card_transactions (id, card_id, user_id, card_position, journal_id, status, side, amount, currency, type,
     merchant_name, original_amount, original_currency, decline_code, created_at, updated_at)
     values (?, ?, ?, coalesce((select last_position from card_transaction_counts where user_id = ? and card_id = ?), 0) + 1,
     ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  type Caller = { userId: string; walletAccountId: number };
  const caller = (header: string | undefined) => auth.get(hashToken((header ?? '').slice(7))) as Caller | undefined;

  const app = Fastify();
  app.get('/bare/wallet/balance', async (request, reply) => {
    const who = caller(request.headers.authorization);
    if (!who) return reply.code(401).send({ success: false });
    const row = wallet.get(who.walletAccountId) as { balance: number; updated_at: string };
    return {
      success: true,
      data: { balance: row.balance / 100, updated_at: row.updated_at },
      message: 'ok',
      timestamp: new Date().toISOString(),
    };
  });
  app.post<{ Params: { id: string }; Body: { amount: number } }>('/bare/cards/:id/topup', async (request, reply) => {
    const who = caller(request.headers.authorization);
    if (!who) return reply.code(401).send({ success: false });
    const amount = Math.round(request.body.amount * 100);
    const now = new Date();
    const at = now.toISOString();
    const cardId = request.params.id;
    begin.run();
    try {
      const card = claim.get(at, cardId, who.userId, new Date(now.getTime() - 1000).toISOString()) as
        | { account_id: number; category: string; deposit: number; limit_amount: number; currency: string }
        | undefined;
      if (!card) {
        rollback.run();
        return reply.code(429).send({ success: false });
      }
      const f = fee.get(card.category) as { percent_bps: number; fixed_amount: number };
      const platformFee = Math.floor((amount * f.percent_bps + 5000) / 10000) + f.fixed_amount;
      const total = amount + platformFee;
      const transactionId = newRecordId(); // the core's ids, for the same index locality
      const walletRow = move.get(-total, at, who.walletAccountId, -total) as { balance: number };
      const cardRow = move.get(amount, at, card.account_id, amount) as { balance: number };
      move.get(platformFee, at, revenue.id, platformFee);
      const { id: journalId } = journal.get(`topup:${transactionId}`, 'topup', at) as { id: number };
      entries.run(journalId, who.walletAccountId, -total, journalId, card.account_id, amount, journalId, revenue.id, platformFee);
      deposit.run(amount, at, cardId);
      line.run(
        transactionId,
        cardId,
        who.userId,
        who.userId,
        cardId,
        journalId,
        'Approved',
        'Credit',
        amount,
        card.currency,
        'topup',
        'Wallet top-up',
        amount,
        card.currency,
        null,
        at,
        at,
      );
      commit.run();
      return {
        success: true,
        data: {
          card_id: cardId,
          transaction_id: transactionId,
          invoice_id: journalId,
          wallet_balance: walletRow.balance / 100,
          total_charged: total / 100,
          platform_fee_amount: platformFee / 100,
          new_card_balance: cardRow.balance / 100,
        },
        message: 'ok',
        timestamp: at,
      };
    } catch (error) {
      rollback.run();
      throw error;
    }
  });
  app.addHook('onClose', async () => raw.close());
  return app;
}

async function load(url: string, options: Partial<autocannon.Options>): Promise<Figures> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SLICE_SECONDS, workers: 1, ...options });
  return figuresOf(url, result);
}

function figuresOf(url: string, result: autocannon.Result): Figures {
  if (result.non2xx + result.errors > 0)
    console.log(`  (${url}: statuses ${JSON.stringify(result.statusCodeStats)}, errors ${result.errors})`);
  // Answers that did the work only: a refusal (a card still on its cooldown) is cheaper than a top-up.
  const rps = result['2xx'] / result.duration;
  return { rps, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx + result.errors };
}

/** Mirrored order (A-B-B-A, or A-B-C-C-B-A): requests and latencies averaged per side. */
async function mirrored(sides: (() => Promise<Figures>)[]): Promise<Figures[]> {
  const runs: Figures[][] = sides.map(() => []);
  for (const i of [...sides.keys(), ...[...sides.keys()].reverse()]) runs[i]!.push(await sides[i]!());
  return runs.map(([x, y]) => ({
    rps: (x!.rps + y!.rps) / 2,
    p50: (x!.p50 + y!.p50) / 2,
    p99: (x!.p99 + y!.p99) / 2,
    non2xx: x!.non2xx + y!.non2xx,
  }));
}

/**
 * Each side once a round after a warm-up slice each, the order turning every round (A-B-C, B-C-A, C-A-B, …): each
 * side's figures averaged over the rounds, and each round's ratios to the first side, to take the median of.
 */
async function inRounds(sides: ((seconds: number) => Promise<Figures>)[], rounds: number) {
  for (const side of sides) await side(1);
  const runs: Figures[][] = sides.map(() => []);
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < sides.length; k++) {
      const i = (round + k) % sides.length;
      runs[i]!.push(await sides[i]!(READ_SLICE_SECONDS));
    }
  }
  const mean = (figures: Figures[], of: (f: Figures) => number) => figures.reduce((sum, f) => sum + of(f), 0) / figures.length;
  const figures = runs.map((r) => ({
    rps: mean(r, (f) => f.rps),
    p50: mean(r, (f) => f.p50),
    p99: mean(r, (f) => f.p99),
    non2xx: r.reduce((sum, f) => sum + f.non2xx, 0),
  }));
  const ratios = runs.map((r) => r.map((f, round) => f.rps / runs[0]![round]!.rps));
  return { figures, ratios };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

const row = (side: string, f: Figures) =>
  `  ${side.padEnd(12)} ${f.rps.toFixed(0).padStart(7)} req/s   p50 ${f.p50.toFixed(1).padStart(5)} ms   p99 ${f.p99.toFixed(1).padStart(5)} ms   non-2xx ${f.non2xx}`;

function report(name: string, r: { bare: Figures; api: Figures; ratio?: number }, targets: { rps: number; p99?: number }): void {
  const rpsRatio = r.ratio ?? r.api.rps / r.bare.rps;
  const p99Ratio = r.api.p99 / r.bare.p99;
  console.log(`${name} (${CONNECTIONS} connections)`);
  console.log(row('bare', r.bare));
  console.log(row('api', r.api));
  const rpsOk = rpsRatio >= targets.rps ? 'ok' : 'BELOW TARGET';
  const kind = r.ratio === undefined ? 'req/s' : 'req/s, median of the rounds,';
  let line = `  api/bare ${kind} ${(rpsRatio * 100).toFixed(0)}% (target ≥ ${targets.rps * 100}%: ${rpsOk})`;
  if (targets.p99 !== undefined) {
    line += `; p99 ${p99Ratio.toFixed(2)}× bare (target ≤ ${targets.p99}×: ${p99Ratio <= targets.p99 ? 'ok' : 'ABOVE TARGET'})`;
  }
  console.log(line);
}

export default async function (): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'api-bench-'));
  const file = path.join(dir, 'bench.db');
  const runtime = await startCore({
    databaseUrl: file,
    cardDataKey: randomBytes(32),
    clock: systemClock,
    settings: { topupCooldownSeconds: 1 },
  });
  const apps: FastifyInstance[] = [];
  try {
    // Setup without waiting on the disk; the measured runs use the core's own setting again (NORMAL, with
    // the WAL flushed after each batch's commit, off the main thread: see `sqliteDialect`).
    const synchronous = runtime.database.sqlite!.pragma('synchronous', { simple: true });
    runtime.database.sqlite!.pragma('synchronous = OFF');
    const { userId, token } = await runtime.admin.createUser({ name: 'Bench', deposit: 10_000_000_000 });
    const caller = await runtime.core.authenticate(token);
    const bin = (await runtime.core.listBins()).find((b) => !b.wallet)!;
    const plan = (await runtime.core.listPlans()).at(-1)!;
    const cards: string[] = [];
    // Fifty at a time: they share commits.
    for (let i = 0; i < CARDS; i += 50) {
      const made = await Promise.all(
        Array.from({ length: Math.min(50, CARDS - i) }, (_, j) =>
          runtime.core.createCard(caller, { bin_id: bin.id, planId: plan.id, name: `c${i + j}` }),
        ),
      );
      cards.push(...made.map((card) => card.id));
    }
    runtime.database.sqlite!.pragma(`synchronous = ${synchronous}`);
    void userId;

    console.log(
      limits
        ? `API with metrics collected and the request limits on (BENCH_API_LIMITS=on), each at ${BENCH_LIMIT.toLocaleString('en-US')} a minute so none refuses`
        : 'API with metrics collected and the request limits OFF (one token at 50 connections would be refused; BENCH_API_LIMITS=on measures them)',
    );
    const api = createHttpServer({
      core: runtime.core,
      db: runtime.database.db,
      // As in production: info, one access line per request, gathered as the process's log is (to /dev/null
      // here; BENCH_LOG=silent measures without them).
      logger: createLogger(process.env.BENCH_LOG ?? 'info', gatheredLogDestination('/dev/null')),
      clock: systemClock,
      limits,
      metrics: createApiMetrics(),
    });
    const bare = bareServer(file);
    apps.push(api, bare);
    const apiUrl = await listen(api);
    const bareUrl = await listen(bare);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    // A third side for reads: the core's own calls in a plain Fastify route, without the API layer,
    // to tell the layer's cost from the core's.
    const direct = Fastify();
    direct.get('/direct/wallet/balance', async (request) => {
      // As the API's route calls it: the token read with the wallet, in one statement.
      const holder = { tokenHash: hashToken((request.headers.authorization ?? '').slice(7)), authenticated() {} };
      const wallet = await runtime.core.walletBalance(holder);
      return {
        success: true,
        data: { balance: wallet.balance / 100, updated_at: wallet.updatedAt },
        message: 'ok',
        timestamp: new Date().toISOString(),
      };
    });
    apps.push(direct);
    const directUrl = await listen(direct);
    const read = (url: string) => async (seconds: number) =>
      figuresOf(url, await autocannon({ url, connections: CONNECTIONS, duration: seconds, workers: 1, headers }));
    const { figures, ratios } = await inRounds(
      [read(`${bareUrl}/bare/wallet/balance`), read(`${directUrl}/direct/wallet/balance`), read(`${apiUrl}/api/v1/wallet/balance`)],
      READ_ROUNDS,
    );
    const [bareReads, directReads, apiReads] = figures;
    const [, directRatios, apiRatios] = ratios;
    const reads = { bare: bareReads!, api: apiReads!, ratio: median(apiRatios!) };
    report(`wallet-balance reads, ${READ_ROUNDS} rounds of ${READ_SLICE_SECONDS} s`, reads, { rps: 0.6 });
    const percents = (values: number[]) => values.map((v) => (v * 100).toFixed(0)).join(' ');
    console.log(`  api/bare each round: ${percents(apiRatios!)}`);
    console.log(row('core direct', directReads!));
    console.log(
      `  api/core-direct req/s ${(median(apiRatios!.map((r, i) => r / directRatios![i]!)) * 100).toFixed(0)}% (the API layer's own cost; core direct/bare ${(median(directRatios!) * 100).toFixed(0)}%)`,
    );
    if (READS_ONLY) return;

    // Cards in turn, each visited at most every CARDS / throughput seconds: off its 1 s cooldown.
    // (In workers mode autocannon takes request hooks as module files.)
    writeFileSync(path.join(dir, 'cards.json'), JSON.stringify(cards));
    const rotation = (prefix: string) => {
      const file = path.join(dir, `rotate-${prefix.replace(/\W/g, '')}.cjs`);
      writeFileSync(
        file,
        `const cards = require('./cards.json'); let next = Math.floor(Math.random() * cards.length);\n` +
          `module.exports = (req) => ({ ...req, path: '${prefix}/' + cards[next++ % cards.length] + '/topup' });\n`,
      );
      return file;
    };
    const topups = (url: string, prefix: string) => {
      const setupRequest = rotation(prefix);
      return async () => {
        await sleep(1100); // the cards the previous slice touched last come off their cooldown
        return load(url, { method: 'POST', headers, body: '{"amount":5}', requests: [{ setupRequest: setupRequest as never }] });
      };
    };
    const commits = runtime.database.groupCommit!;
    const before = { ...commits };
    const [bareWrites, apiWrites] = await mirrored([topups(bareUrl, '/bare/cards'), topups(apiUrl, '/api/v1/cards')]);
    const writes = { bare: bareWrites!, api: apiWrites! };
    report('top-ups off cooldown', writes, { rps: 2, p99: 1 });
    const perCommit = (commits.operations - before.operations) / Math.max(1, commits.commits - before.commits);
    console.log(`  api group commit: ${perCommit.toFixed(1)} writes a commit on average, ${commits.largest} at most`);
    const ledger = await runtime.admin.checkLedger();
    console.log(
      `  ledger after the run: ${ledger.differences.length} differences, ${ledger.unbalancedJournals.length} unbalanced journals`,
    );
  } finally {
    for (const app of apps) await app.close();
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
