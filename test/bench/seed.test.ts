import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { seedBenchData } from '../../bench/seed.js';
import { startCore } from '../../src/app/compose.js';
import { FakeClock } from '../../src/infra/clock.js';
import { isLuhnValid } from '../../src/core/provider/luhn.js';
import { createCardDataCipher } from '../../src/core/keys/secrets.js';
import { openSqlite } from '../../src/db/database.js';
import { TEST_CARD_DATA_KEY } from '../helpers/core.js';

describe('bench seed (bench/seed.ts)', () => {
  test("a seeded database keeps the core's rules: a balanced ledger, foreign keys, sealed card data, counted and positioned statements", async (ctx) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cards-seed-test-'));
    ctx.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'seeded.db');
    const clock = new FakeClock('2026-03-01T12:00:00.000Z');
    const options = { databaseUrl: file, cardDataKey: TEST_CARD_DATA_KEY, clock };
    const first = await startCore(options);
    const { token } = await first.admin.createUser({ name: 'Focus', deposit: 100_000_000 });
    const owner = await first.core.authenticate(token);
    const plan = await first.admin.addPlan({ name: 'High', description: 'high limit', limit: 1_000_000_000, creationFee: 0 });
    const bin = (await first.core.listBins()).find((b) => b.initialBalance === 0)!;
    const focus = await first.core.createCard(owner, { bin_id: bin.id, planId: plan.id, name: 'Focus' });
    await first.close();

    const report = seedBenchData(file, {
      cards: 60,
      transactions: 3_000,
      cardsPerUser: 4,
      focus: { cardId: focus.id, transactions: 400 },
      cipher: createCardDataCipher(TEST_CARD_DATA_KEY),
      until: clock.now(),
    });
    assert.deepEqual(
      { users: report.users, cards: report.cards, transactions: report.transactions },
      { users: 15, cards: 60, transactions: 3_400 },
    );

    const raw = openSqlite(file);
    try {
      assert.deepEqual(raw.pragma('foreign_key_check'), []);
      assert.equal(raw.pragma('integrity_check', { simple: true }), 'ok');
      assert.equal(raw.pragma('journal_mode', { simple: true }), 'wal');
      const latest = raw.prepare('select max(created_at) from card_transactions').pluck().get() as string;
      assert.ok(latest < clock.now().toISOString());
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

    const runtime = await startCore(options);
    ctx.after(() => runtime.close());
    const ledger = await runtime.admin.checkLedger();
    assert.deepEqual(
      { differences: ledger.differences, unbalanced: ledger.unbalancedJournals, total: ledger.total },
      { differences: [], unbalanced: [], total: 0 },
    );
    const page = await runtime.core.listTransactions(owner, { card_id: focus.id });
    assert.equal(page.pagination.total, 400); // the BIN gives no initial balance: the seeded lines only
    const cards = await runtime.admin.listCards();
    const seeded = cards.find((c) => c.id !== focus.id)!;
    const details = await runtime.core.getSensitiveDetails({ userId: seeded.userId, walletAccountId: 0 }, seeded.id);
    assert.ok(isLuhnValid(details.pan));
    assert.ok(/^\d{3}$/.test(details.cvv)); // not assert.match: a failure would print the CVV
  });
});
