import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { down, up } from '../../migrations/20261124_04_card_positions.js';
import { recordCardTransaction } from '../../src/core/operations/card-records.js';
import type { Customer, TestCore } from '../helpers/core.js';
import { newCard, newCustomer } from '../helpers/core.js';
import { dialects, useCore, withoutPostgres } from '../core/dialects.js';

interface Placed {
  card_id: string;
  card_position: number;
  place: number;
}

/** Every line's position beside its place in its card's statement counted in the order written. */
async function positions(t: TestCore): Promise<Placed[]> {
  const { rows } = await sql<Placed>`
    select card_id, card_position, row_number() over (partition by user_id, card_id order by seq) as place
    from card_transactions order by card_id, seq
  `.execute(t.database.db);
  return rows.map((r) => ({ ...r, card_position: Number(r.card_position), place: Number(r.place) }));
}

/** Each card's counts row: lines counted, last position given. */
async function counts(t: TestCore, cardId: string): Promise<{ transactions: number; last: number }> {
  const row = await t.database.db
    .selectFrom('card_transaction_counts')
    .select(['transactions', 'last_position'])
    .where('card_id', '=', cardId)
    .executeTakeFirstOrThrow();
  return { transactions: Number(row.transactions), last: Number(row.last_position) };
}

/** A declined purchase: a statement line that moves no money, so any number fit on a card. */
async function declinedLines(t: TestCore, cardId: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await t.admin.simulatePurchase(cardId, 100_000_000 + i);
}

/** The page as skipping lines newest first (the statement's order before positions) gives it: ids. */
async function skippedPage(t: TestCore, owner: Customer, cardId: string, page: number, limit: number): Promise<string[]> {
  const rows = await t.database.db
    .selectFrom('card_transactions')
    .select('id')
    .where('user_id', '=', owner.userId)
    .where('card_id', '=', cardId)
    .orderBy('seq', 'desc')
    .limit(limit)
    .offset((page - 1) * limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Every page of the card's statement at each limit, one past the last too, beside the skipped one. */
async function assertPagesAsSkipped(t: TestCore, owner: Customer, cardId: string): Promise<void> {
  for (const limit of [1, 3, 7, 10, 25, 100]) {
    const { pagination } = await t.core.listTransactions(owner.caller, { card_id: cardId, limit });
    for (let page = 1; page <= pagination.totalPages + 1; page++) {
      const listed = await t.core.listTransactions(owner.caller, { card_id: cardId, page, limit });
      assert.deepEqual(
        listed.data.map((line) => line.id),
        await skippedPage(t, owner, cardId, page, limit),
        `page ${page} of ${limit}`,
      );
    }
  }
}

for (const dialect of dialects()) {
  describe(`card positions (migrations/20261124_04_card_positions.ts, ${dialect})`, () => {
    test("each card's lines take positions 1, 2, … in the order written; its counts row keeps the last", async (ctx) => {
      const t = await useCore(ctx, dialect, { settings: { topupCooldownSeconds: 1 } });
      const alice = await newCustomer(t, 1_000_000, 'Alice');
      const bob = await newCustomer(t, 1_000_000, 'Bob');
      const cards = [await newCard(t, alice), await newCard(t, alice, 'Travel'), await newCard(t, bob)];
      for (let round = 0; round < 3; round++) {
        for (const [i, card] of cards.entries()) {
          t.clock.advance(1_000);
          await t.core.topup(i < 2 ? alice.caller : bob.caller, card.id, { amount: 1_000 });
          await declinedLines(t, card.id, i);
        }
      }
      const placed = await positions(t);
      assert.equal(placed.length, 3 * (1 + 2 + 3));
      assert.deepEqual(
        placed.map((p) => p.card_position),
        placed.map((p) => p.place),
      );
      for (const [i, card] of cards.entries()) assert.deepEqual(await counts(t, card.id), { transactions: 3 * (i + 1), last: 3 * (i + 1) });
      // On Postgres the top-up statement takes its line's position itself and marks it; the trigger takes the others'.
      const marks = await t.database.db.selectFrom('card_transactions').select(['type', 'position_given']).execute();
      for (const { type, position_given } of marks) {
        assert.equal(Boolean(position_given), dialect === 'postgres' && type === 'topup', `${type} on ${dialect}`);
      }
    });

    test("a deleted line's position is never given again: the next line takes the one after the last", async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000_000);
      const card = await newCard(t, alice);
      await declinedLines(t, card.id, 4);
      await sql`delete from card_transactions where card_id = ${card.id} and card_position = 4`.execute(t.database.db);
      assert.deepEqual(await counts(t, card.id), { transactions: 3, last: 4 });
      await declinedLines(t, card.id, 1);
      const placed = (await positions(t)).filter((p) => p.card_id === card.id);
      assert.deepEqual(
        placed.map((p) => p.card_position),
        [1, 2, 3, 5],
      );
      assert.deepEqual(await counts(t, card.id), { transactions: 4, last: 5 });
    });

    test("every page of a card's statement is the one skipping lines newest first gives, with or without a gap", async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000_000);
      const card = await newCard(t, alice);
      const other = await newCard(t, alice, 'Other');
      await declinedLines(t, card.id, 12);
      await declinedLines(t, other.id, 2);
      await declinedLines(t, card.id, 11);
      await assertPagesAsSkipped(t, alice, card.id);

      await sql`delete from card_transactions where card_id = ${card.id} and card_position in (1, 9)`.execute(t.database.db);
      await assertPagesAsSkipped(t, alice, card.id);
      await declinedLines(t, card.id, 2);
      await assertPagesAsSkipped(t, alice, card.id);
      assert.equal((await t.core.listTransactions(alice.caller, { card_id: card.id })).pagination.total, 23);
    });

    test('migrating a database that holds lines numbers each card’s lines in the order written', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const alice = await newCustomer(t, 1_000_000);
      const cards = [await newCard(t, alice), await newCard(t, alice, 'Travel')];
      await down(t.database.db);
      // Lines written as they were before positions (the core's insert names the column), the two cards'
      // interleaved, one deleted.
      for (let i = 0; i < 15; i++) {
        for (const card of cards) {
          await sql`
            insert into card_transactions (id, card_id, user_id, journal_id, status, side, amount, currency, type, merchant_name,
              original_amount, original_currency, decline_code, created_at, updated_at)
            values (${randomUUID()}, ${card.id}, ${alice.userId}, null, 'Declined', 'Debit', ${100 + i}, 'USD', 'purchase', 'Shop',
              ${100 + i}, 'USD', 'insufficient_funds', ${card.createdAt}, ${card.createdAt})
          `.execute(t.database.db);
        }
      }
      await sql`delete from card_transactions where seq = (select min(seq) from card_transactions where card_id = ${cards[0]!.id})`.execute(
        t.database.db,
      );
      await up(t.database.db);

      const placed = await positions(t);
      assert.equal(placed.length, 15 + 15 - 1);
      assert.deepEqual(
        placed.map((p) => p.card_position),
        placed.map((p) => p.place),
      );
      assert.deepEqual(await counts(t, cards[0]!.id), { transactions: 14, last: 14 });
      assert.deepEqual(await counts(t, cards[1]!.id), { transactions: 15, last: 15 });
      await declinedLines(t, cards[0]!.id, 1);
      assert.deepEqual(await counts(t, cards[0]!.id), { transactions: 15, last: 15 });
      await assertPagesAsSkipped(t, alice, cards[0]!.id);
    });
  });
}

describe('card positions under concurrent writers (Postgres)', () => {
  test('lines written to one card by several transactions at once take distinct, consecutive positions', {
    skip: withoutPostgres,
  }, async (ctx) => {
    const t = await useCore(ctx, 'postgres');
    const alice = await newCustomer(t, 1_000_000);
    const card = await newCard(t, alice);
    const writers = 6;
    const linesEach = 5;
    let begun = 0;
    let allBegun: () => void = () => undefined;
    const barrier = new Promise<void>((resolve) => {
      allBegun = resolve;
    });
    await Promise.all(
      Array.from({ length: writers }, (_, writer) =>
        t.database.db.transaction().execute(async (trx) => {
          // Each transaction holds its own connection before any of them writes, so their inserts race.
          await sql`select 1`.execute(trx);
          if (++begun === writers) allBegun();
          await barrier;
          for (let i = 0; i < linesEach; i++) {
            await recordCardTransaction(trx, {
              cardId: card.id,
              userId: alice.userId,
              journalId: null,
              status: 'Declined',
              side: 'Debit',
              type: 'purchase',
              amount: 100 * (writer + 1) + i,
              currency: 'USD',
              merchantName: `Writer ${writer}`,
              declineCode: 'insufficient_funds',
              at: t.clock.now().toISOString(),
            });
          }
        }),
      ),
    );
    const { rows } = await sql<{ card_position: number }>`
      select card_position from card_transactions where card_id = ${card.id} order by card_position
    `.execute(t.database.db);
    const all = writers * linesEach;
    assert.deepEqual(
      rows.map((r) => Number(r.card_position)),
      Array.from({ length: all }, (_, i) => i + 1),
    );
    assert.deepEqual(await counts(t, card.id), { transactions: all, last: all });
    assert.equal((await t.core.listTransactions(alice.caller, { card_id: card.id, page: 2, limit: 7 })).data.length, 7);
  });
});
