import { randomUUID } from 'node:crypto';
import type { Updateable } from 'kysely';
import type { AuthorizationInput } from '../../src/core/authorization/types.js';
import type { CardsTable } from '../../src/db/schema.js';
import { newCard, newCustomer, type TestCore } from './core.js';

/** Writes a card's columns directly (its controls, auto top-up, type, state) for a test's starting point. */
export async function setCard(t: TestCore, cardId: string, columns: Updateable<CardsTable>): Promise<void> {
  await t.database.db.updateTable('cards').set(columns).where('id', '=', cardId).execute();
}

/** A purchase at a bakery (MCC 5462, US), a fresh provider transaction id unless `more` gives one. */
export function purchase(cardId: string, amount: number, more: Partial<AuthorizationInput> = {}): AuthorizationInput {
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

/** A customer with $10,000 in the wallet and a card topped up with `amount` cents, its cooldown passed. */
export async function funded(t: TestCore, amount = 10_000) {
  const alice = await newCustomer(t, 1_000_000);
  const card = await newCard(t, alice);
  if (amount > 0) await t.core.topup(alice.caller, card.id, { amount });
  t.clock.advance(3_600_000);
  const balance = async () => (await t.core.getCard(alice.caller, card.id)).balance;
  const lines = async () => (await t.core.listTransactions(alice.caller, { card_id: card.id })).data;
  const wallet = async () => (await t.core.walletBalance(alice.caller)).balance;
  return { alice, card, balance, lines, wallet };
}
