import { ProviderError } from '../../src/core/provider/provider.js';
import assert from 'node:assert/strict';
import type { CoreRuntime } from '../../src/app/compose.js';
import type { Card, CardTransaction } from '../../src/core/operations/views.js';
import type { Customer } from './core.js';

/** What a user sees of what the core holds for operations waiting on the provider (test/core/holds*.test.ts). */

/** Every line of the card's statement, newest first, with the statement's own total. */
export async function statementOf(
  t: CoreRuntime,
  customer: Customer,
  cardId: string,
): Promise<{ lines: CardTransaction[]; total: number }> {
  const page = await t.core.listTransactions(customer.caller, { card_id: cardId, limit: 100 });
  return { lines: page.data, total: page.pagination.total };
}

/** What the card's Approved and Pending lines sum to (a Declined line moved nothing). */
export function statementSum(lines: CardTransaction[]): number {
  return lines.filter((l) => l.status !== 'Declined').reduce((sum, l) => sum + (l.side === 'Credit' ? l.amount : -l.amount), 0);
}

/**
 * Read at once: each card's balance is what its statement sums to, the statement's total counts its lines,
 * and the wallet is `explained` less the creation fees it holds for cards being issued, which the
 * processing cards show. Returns the cards.
 */
export async function assertShown(t: CoreRuntime, customer: Customer, explained: number): Promise<Card[]> {
  const cards = await t.core.listCards(customer.caller);
  for (const card of cards) {
    const { lines, total } = await statementOf(t, customer, card.id);
    assert.equal(statementSum(lines), card.balance, `card ${card.name}: balance ${card.balance} against its statement`);
    assert.equal(total, lines.length, `card ${card.name}: the statement's total`);
  }
  const heldFees = cards.filter((c) => c.status === 'processing').reduce((sum, c) => sum + (c.heldFee ?? 0), 0);
  assert.equal(await t.core.walletHeld(customer.caller), heldFees, 'the fees the wallet holds are the processing cards’');
  assert.equal((await t.core.walletBalance(customer.caller)).balance, explained - heldFees, 'the wallet');
  const ledger = await t.admin.checkLedger();
  assert.deepEqual(ledger.differences, []);
  assert.deepEqual(ledger.unbalancedJournals, []);
  assert.equal(ledger.total, 0);
  return cards;
}

/** Each card's counts row (migrations/20261124_02_transaction_counts.ts) counts the lines it has. */
export async function assertCounted(t: CoreRuntime): Promise<void> {
  const counts = await t.database.db.selectFrom('card_transaction_counts').select(['card_id', 'transactions']).execute();
  for (const { card_id, transactions } of counts) {
    const lines = await t.database.db.selectFrom('card_transactions').select('id').where('card_id', '=', card_id).execute();
    assert.equal(Number(transactions), lines.length, `card ${card_id} counts its lines`);
  }
}

export type HeldOperation = 'withdraw' | 'terminate' | 'issue';

/**
 * Holds the provider's next call of `operation` open until `release` (which lets it go on, or fails it
 * as a provider refusal with `refusal`); `reached` resolves once the call has been made.
 */
export function holdNextCall(t: CoreRuntime, operation: HeldOperation) {
  const provider = t.provider as unknown as Record<HeldOperation, (...args: unknown[]) => Promise<unknown>>;
  const real = provider[operation].bind(t.provider);
  let reach: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  let release: (refusal?: string) => void = () => undefined;
  const released = new Promise<string | undefined>((resolve) => (release = resolve));
  provider[operation] = async (...args: unknown[]) => {
    provider[operation] = real;
    reach();
    const refusal = await released;
    if (refusal !== undefined) throw new ProviderError(refusal);
    return real(...args);
  };
  return { reached, release };
}
