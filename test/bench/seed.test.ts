import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import pg from 'pg';
import { seedBenchData } from '../../bench/seed.js';
import { startCore } from '../../src/app/compose.js';
import { FakeClock } from '../../src/infra/clock.js';
import { isLuhnValid } from '../../src/core/provider/luhn.js';
import { createCardDataCipher } from '../../src/core/keys/secrets.js';
import { openSqlite } from '../../src/db/database.js';
import { TEST_CARD_DATA_KEY } from '../helpers/core.js';
import { freshPostgresSchema, whileNoSchemaIsDropped, withoutPostgres } from '../core/dialects.js';

const FOCUS_LINES = 400;

/** A core on `databaseUrl` with one user and their card (the focus), then the seed around them. */
async function seeded(databaseUrl: string, migrate: <T>(run: () => Promise<T>) => Promise<T> = (run) => run()) {
  const clock = new FakeClock('2026-03-01T12:00:00.000Z');
  const options = { databaseUrl, cardDataKey: TEST_CARD_DATA_KEY, clock };
  const first = await migrate(() => startCore(options));
  const { token } = await first.admin.createUser({ name: 'Focus', deposit: 100_000_000 });
  const owner = await first.core.authenticate(token);
  const plan = await first.admin.addPlan({ name: 'High', description: 'high limit', limit: 1_000_000_000, creationFee: 0 });
  const bin = (await first.core.listBins()).find((b) => b.initialBalance === 0)!;
  const focus = await first.core.createCard(owner, { bin_id: bin.id, planId: plan.id, name: 'Focus' });
  await first.close();

  const report = await seedBenchData(databaseUrl, {
    cards: 60,
    transactions: 3_000,
    cardsPerUser: 4,
    focus: { cardId: focus.id, transactions: FOCUS_LINES },
    cipher: createCardDataCipher(TEST_CARD_DATA_KEY),
    until: clock.now(),
  });
  assert.deepEqual(
    { users: report.users, cards: report.cards, transactions: report.transactions },
    { users: 15, cards: 60, transactions: 3_000 + FOCUS_LINES },
  );
  return { clock, options, owner, focus };
}

/** What the core itself sees: a balanced ledger, the focus card's statement, sealed card data; and it goes on writing (ids, positions). */
async function checkThroughTheCore(ctx: TestContext, { clock, options, owner, focus }: Awaited<ReturnType<typeof seeded>>) {
  const runtime = await startCore(options);
  ctx.after(() => runtime.close());
  const ledger = await runtime.admin.checkLedger();
  assert.deepEqual(
    { differences: ledger.differences, unbalanced: ledger.unbalancedJournals, total: ledger.total },
    { differences: [], unbalanced: [], total: 0 },
  );
  const page = await runtime.core.listTransactions(owner, { card_id: focus.id });
  assert.equal(page.pagination.total, FOCUS_LINES); // the BIN gives no initial balance: the seeded lines only
  const cards = await runtime.admin.listCards();
  const other = cards.find((c) => c.id !== focus.id)!;
  const details = await runtime.core.getSensitiveDetails({ userId: other.userId, walletAccountId: 0 }, other.id);
  assert.ok(isLuhnValid(details.pan));
  assert.ok(/^\d{3}$/.test(details.cvv)); // not assert.match: a failure would print the CVV

  // New accounts and journals take ids past the seed's, and a new line the card's next position.
  await runtime.admin.createUser({ name: 'After the seed', deposit: 1_000 });
  clock.advance(60_000);
  await runtime.core.topup(owner, focus.id, { amount: 500 });
  const after = await runtime.core.listTransactions(owner, { card_id: focus.id, limit: 1 });
  assert.equal(after.pagination.total, FOCUS_LINES + 1);
  assert.equal(after.data[0]?.type, 'topup');
  const ledgerAfter = await runtime.admin.checkLedger();
  assert.deepEqual(
    { differences: ledgerAfter.differences, unbalanced: ledgerAfter.unbalancedJournals },
    { differences: [], unbalanced: [] },
  );
}

describe('bench seed (bench/seed.ts)', () => {
  test("a seeded database keeps the core's rules: a balanced ledger, foreign keys, sealed card data, counted and positioned statements", async (ctx) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cards-seed-test-'));
    ctx.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'seeded.db');
    const seed = await seeded(file);

    const raw = openSqlite(file);
    try {
      assert.deepEqual(raw.pragma('foreign_key_check'), []);
      assert.equal(raw.pragma('integrity_check', { simple: true }), 'ok');
      assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
      const latest = raw.prepare('select max(created_at) from card_transactions').pluck().get() as string;
      assert.ok(latest < seed.clock.now().toISOString());
      // Each card's lines hold positions 1 to n in the order written, and its counts row says n twice.
      const misplaced = raw
        .prepare(
          `select count(*) from (select card_position, row_number() over (partition by user_id, card_id order by seq) as place
           from card_transactions) where card_position != place`,
        )
        .pluck()
        .get();
      assert.equal(misplaced, 0);
      const miscounted = raw
        .prepare(
          `select count(*) from (select user_id, card_id, count(*) as n from card_transactions group by user_id, card_id) as lines
           left join card_transaction_counts counts using (user_id, card_id)
           where counts.transactions is not lines.n or counts.last_position is not lines.n`,
        )
        .pluck()
        .get();
      assert.equal(miscounted, 0);
    } finally {
      raw.close();
    }
    await checkThroughTheCore(ctx, seed);
  });

  test('on Postgres too: no orphan rows, positions and counts as the triggers would have left them, indexes and triggers back', {
    skip: withoutPostgres,
  }, async (ctx) => {
    const baseUrl = process.env.TEST_DATABASE_URL!;
    const schema = await freshPostgresSchema(baseUrl);
    ctx.after(() => schema.drop());
    const client = new pg.Client({ connectionString: schema.url });
    const count = async (query: string) => Number((await client.query<{ n: string }>(query)).rows[0]!.n);
    const indexes = () => client.query('select indexname, indexdef from pg_indexes where schemaname = current_schema() order by 1');

    let before: unknown;
    const seed = await seeded(schema.url, async (run) => {
      const core = await whileNoSchemaIsDropped(baseUrl, run);
      await client.connect();
      ctx.after(() => client.end());
      before = (await indexes()).rows;
      return core;
    });

    // Postgres has no foreign_key_check: each single-column foreign key of the schema, checked by hand (the seed skipped the checks).
    const keys = await client.query<{ child: string; column: string; parent: string; key: string }>(
      `select c.conrelid::regclass::text as child, a.attname as column, c.confrelid::regclass::text as parent, p.attname as key
       from pg_constraint c
       join pg_attribute a on a.attrelid = c.conrelid and a.attnum = c.conkey[1]
       join pg_attribute p on p.attrelid = c.confrelid and p.attnum = c.confkey[1]
       where c.contype = 'f' and c.connamespace = current_schema()::regnamespace and cardinality(c.conkey) = 1`,
    );
    assert.ok(keys.rows.some((k) => k.child === 'card_transactions' && k.parent === 'journals'));
    for (const { child, column, parent, key } of keys.rows) {
      const orphans = await count(
        `select count(*) as n from ${child} where ${column} is not null and not exists (select 1 from ${parent} where ${parent}.${key} = ${child}.${column})`,
      );
      assert.equal(orphans, 0, `${child}.${column} -> ${parent}.${key}`);
    }
    const latest = (await client.query<{ latest: string }>('select max(created_at) as latest from card_transactions')).rows[0]!.latest;
    assert.ok(latest < seed.clock.now().toISOString());
    const misplaced = await count(
      `select count(*) as n from (select card_position, row_number() over (partition by user_id, card_id order by seq) as place
       from card_transactions) as numbered where card_position <> place`,
    );
    assert.equal(misplaced, 0);
    const miscounted = await count(
      `select count(*) as n from (select user_id, card_id, count(*) as n from card_transactions group by user_id, card_id) as lines
       left join card_transaction_counts counts using (user_id, card_id)
       where counts.transactions is distinct from lines.n or counts.last_position is distinct from lines.n`,
    );
    assert.equal(miscounted, 0);
    assert.deepEqual((await indexes()).rows, before);
    const disabled = await count(
      "select count(*) as n from pg_trigger where tgrelid = 'card_transactions'::regclass and not tgisinternal and tgenabled <> 'O'",
    );
    assert.equal(disabled, 0);
    const analysed = await count(
      "select count(*) as n from pg_stats where schemaname = current_schema() and tablename = 'card_transactions'",
    );
    assert.ok(analysed > 0);

    await checkThroughTheCore(ctx, seed);
  });
});
