import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Updateable } from 'kysely';
import type { AuthorizationInput } from '../../src/core/authorization/types.js';
import type { CardsTable } from '../../src/db/schema.js';
import { newCard, newCustomer, type TestCore } from '../helpers/core.js';
import { dialects, useCore } from './dialects.js';

// The authorization engine's edges a review found: closed and frozen cards, late clearings and voids,
// auto top-up's limits, a single-use card's closure.

async function setCard(t: TestCore, cardId: string, columns: Updateable<CardsTable>): Promise<void> {
  await t.database.db.updateTable('cards').set(columns).where('id', '=', cardId).execute();
}

function purchase(cardId: string, amount: number, more: Partial<AuthorizationInput> = {}): AuthorizationInput {
  return {
    cardId,
    amount,
    currency: 'USD',
    merchant: { name: 'Bakery', mcc: '5462', country: 'US' },
    kind: 'purchase',
    providerTransactionId: randomUUID(),
    ...more,
  };
}

async function funded(t: TestCore, amount = 10_000) {
  const alice = await newCustomer(t, 1_000_000);
  const card = await newCard(t, alice);
  if (amount > 0) await t.core.topup(alice.caller, card.id, { amount });
  t.clock.advance(3_600_000);
  const balance = async () => (await t.core.getCard(alice.caller, card.id)).balance;
  const wallet = async () => (await t.core.walletBalance(alice.caller)).balance;
  return { alice, card, balance, wallet };
}

async function assertLedgerExact(t: TestCore): Promise<void> {
  const ledger = await t.admin.checkLedger();
  assert.deepEqual([ledger.differences, ledger.unbalancedJournals, ledger.total], [[], [], 0]);
}

for (const dialect of dialects()) {
  describe(`authorization engine, reviewed edges (${dialect})`, () => {
    test('a used single-use card, closed, declines card_closed with "New card like this"', async (ctx) => {
      const t = await useCore(ctx, dialect);
      const { card } = await funded(t, 2_000);
      await setCard(t, card.id, { type: 'single_use' });
      const first = purchase(card.id, 500);
      await t.core.authorize(first);
      assert.equal((await t.core.clearAuthorization({ providerTransactionId: first.providerTransactionId })).cardClosed, true);
      const next = await t.core.authorize(purchase(card.id, 100));
      assert.deepEqual([next.declineCode, next.fix], ['card_closed', { kind: 'new_card_like' }]);
    });
  });
}
