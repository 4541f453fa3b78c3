import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { describe, test } from 'node:test';
import { catalogue, newCard, newCustomer } from '../helpers/core.js';
import { dialects, useCore } from '../core/dialects.js';
import type { TestCore } from '../helpers/core.js';

/** The counts the database keeps, and the lines counted one by one, per user and card. */
async function countsAndLines(t: TestCore) {
  const kept = await sql<{ user_id: string; card_id: string; n: number }>`
    select user_id, card_id, transactions as n from card_transaction_counts where transactions > 0 order by user_id, card_id
  `.execute(t.database.db);
  const counted = await sql<{ user_id: string; card_id: string; n: number }>`
    select user_id, card_id, count(*) as n from card_transactions group by user_id, card_id order by user_id, card_id
  `.execute(t.database.db);
  const plain = (rows: { user_id: string; card_id: string; n: number }[]) => rows.map((r) => ({ ...r, n: Number(r.n) }));
  return { kept: plain(kept.rows), counted: plain(counted.rows) };
}

for (const dialect of dialects()) {
  describe(`statement counts (migrations/20261124_02_transaction_counts.ts, ${dialect})`, () => {
    test('the database counts every statement line as it is written or deleted, per user and card', async (ctx) => {
      const t = await useCore(ctx, dialect, { settings: { topupCooldownSeconds: 1 } });
      const alice = await newCustomer(t, 1_000_000, 'Alice');
      const bob = await newCustomer(t, 1_000_000, 'Bob');
      const { bins, plans } = await catalogue(t);
      const funded = bins.find((b) => b.initialBalance > 0)!;
      const cards = [
        await newCard(t, alice),
        await t.core.createCard(alice.caller, { bin_id: funded.id, planId: plans[0]!.id, name: 'Funded' }),
        await newCard(t, bob),
      ];
      for (const [i, card] of cards.entries()) {
        const owner = i < 2 ? alice : bob;
        for (let n = 0; n <= i; n++) {
          t.clock.advance(1_000);
          await t.core.topup(owner.caller, card.id, { amount: 1_000 });
          await t.admin.simulatePurchase(card.id, 100_000_000); // declined: a line without a journal
        }
      }
      const { kept, counted } = await countsAndLines(t);
      assert.deepEqual(kept, counted);
      assert.equal(kept.length, 3);

      const [line] = (
        await sql<{ seq: number }>`select seq from card_transactions where card_id = ${cards[2]!.id} limit 1`.execute(t.database.db)
      ).rows;
      await sql`delete from card_transactions where seq = ${line!.seq}`.execute(t.database.db);
      const after = await countsAndLines(t);
      assert.deepEqual(after.kept, after.counted);

      const page = await t.core.listTransactions(alice.caller, { card_id: cards[1]!.id });
      assert.equal(page.pagination.total, 5); // the initial balance, two top-ups, two declined purchases
      assert.equal((await t.core.listTransactions(alice.caller, {})).pagination.total, 7);
    });
  });
}
