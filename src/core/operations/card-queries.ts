import { compiledOnce } from '../../db/compiled-query.js';
import type { Executor } from '../../db/schema.js';
import { CardServiceError } from '../rules/errors.js';
import type { Caller, CardWithBalance } from './views.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

export function selectCards(ex: Executor) {
  return ex.selectFrom('cards').innerJoin('accounts', 'accounts.id', 'cards.account_id').selectAll('cards').select('accounts.balance');
}

// Compiled once (see `compiledOnce`): every card screen and request reads a card, and built each
// time the read takes twice as long (`bench/core.bench.ts`, card read).
const ownedCard = compiledOnce(2, (ex, cardId: string, userId: string) =>
  selectCards(ex).where('cards.id', '=', cardId).where('cards.user_id', '=', userId),
);

/** A card id as given: empty is `Card ID is required`; anything but a UUID cannot be a card. */
export function checkCardId(cardId: string): string {
  if (cardId.trim() === '') throw new CardServiceError('CARD_ID_REQUIRED');
  if (!isUuid(cardId)) throw new CardServiceError('CARD_NOT_FOUND');
  return cardId;
}

/** The caller's card by id; another user's card reads exactly like a missing one. */
export async function findOwnedCard(ex: Executor, caller: Caller, cardId: string): Promise<CardWithBalance> {
  checkCardId(cardId);
  const [card] = (await ownedCard.execute(ex, cardId, caller.userId)).rows;
  if (!card) throw new CardServiceError('CARD_NOT_FOUND');
  return card;
}

export async function accountBalance(ex: Executor, accountId: number): Promise<number> {
  const row = await ex.selectFrom('accounts').select('balance').where('id', '=', accountId).executeTakeFirst();
  if (!row) throw new Error(`No account ${accountId}`);
  return Number(row.balance);
}

/**
 * The account's balance with its row locked until the transaction ends, so that what is read is
 * what the transaction then moves (Postgres runs purchases beside it; SQLite's `begin immediate`
 * already serializes writers). A no-op update rather than `for update`, which SQLite lacks.
 */
export async function lockedBalance(ex: Executor, accountId: number): Promise<number> {
  const row = await ex
    .updateTable('accounts')
    .set((eb) => ({ balance: eb.ref('balance') }))
    .where('id', '=', accountId)
    .returning('balance')
    .executeTakeFirst();
  if (!row) throw new Error(`No account ${accountId}`);
  return Number(row.balance);
}

/** The card's status with its row locked until the transaction ends (closing and freezing wait). */
export async function lockedCardStatus(ex: Executor, cardId: string): Promise<CardWithBalance['status']> {
  const row = await ex
    .updateTable('cards')
    .set((eb) => ({ status: eb.ref('status') }))
    .where('id', '=', cardId)
    .returning('status')
    .executeTakeFirst();
  if (!row) throw new Error(`No card ${cardId}`);
  return row.status;
}

/**
 * The account a credit meant for a card goes to (a hold released, the rest of a smaller clearing, a
 * refund): the card's own, or its owner's wallet once the card is closed, where nothing could reach it
 * (a closed card takes no top-up, withdrawal or closure). Read with the card locked.
 */
export async function creditAccountOf(ex: Executor, card: { status: string; account_id: number; user_id: string }): Promise<number> {
  if (card.status !== 'closed') return card.account_id;
  const owner = await ex.selectFrom('users').select('wallet_account_id').where('id', '=', card.user_id).executeTakeFirstOrThrow();
  return owner.wallet_account_id;
}
