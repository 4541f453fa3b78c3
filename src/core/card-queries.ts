import { compiledOnce } from '../db/compiled-query.js';
import type { Executor } from '../db/schema.js';
import { CardServiceError, type Refusal } from './errors.js';
import type { Caller, CardWithBalance } from './views.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

export function selectCards(ex: Executor) {
  return ex.selectFrom('cards').innerJoin('accounts', 'accounts.id', 'cards.account_id').selectAll('cards').select('accounts.balance');
}

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

const balanceOf = compiledOnce(1, (ex, accountId: number) => ex.selectFrom('accounts').select('balance').where('id', '=', accountId));

export async function accountBalance(ex: Executor, accountId: number): Promise<number> {
  const [row] = (await balanceOf.execute(ex, accountId)).rows;
  if (!row) throw new Error(`No account ${accountId}`);
  return Number(row.balance);
}

const lockBalance = compiledOnce(1, (ex, accountId: number) =>
  ex
    .updateTable('accounts')
    .set((eb) => ({ balance: eb.ref('balance') }))
    .where('id', '=', accountId)
    .returning('balance'),
);

/**
 * The account's balance with its row locked until the transaction ends, so that what is read is
 * what the transaction then moves (Postgres runs purchases beside it; SQLite's `begin immediate`
 * already serializes writers). A no-op update rather than `for update`, which SQLite lacks.
 */
export async function lockedBalance(ex: Executor, accountId: number): Promise<number> {
  const [row] = (await lockBalance.execute(ex, accountId)).rows;
  if (!row) throw new Error(`No account ${accountId}`);
  return Number(row.balance);
}

const lockCard = compiledOnce(1, (ex, cardId: string) =>
  ex
    .updateTable('cards')
    .set((eb) => ({ status: eb.ref('status') }))
    .where('id', '=', cardId)
    .returning('status'),
);

/** The card's status with its row locked until the transaction ends (closing and freezing wait). */
export async function lockedCardStatus(ex: Executor, cardId: string): Promise<CardWithBalance['status']> {
  const [row] = (await lockCard.execute(ex, cardId)).rows;
  if (!row) throw new Error(`No card ${cardId}`);
  return row.status;
}

type CooldownColumn = 'last_topup_attempt_at' | 'last_withdraw_attempt_at';

/**
 * Records an attempt on the card's cooldown, unless one was recorded less than `seconds` ago: a
 * conditional update decides, so two simultaneous attempts cannot both pass. Returns the seconds
 * left when refused.
 */
export async function claimCooldown(
  ex: Executor,
  cardId: string,
  column: CooldownColumn,
  seconds: number,
  now: Date,
): Promise<{ claimed: true } | { claimed: false; secondsLeft: number }> {
  const threshold = new Date(now.getTime() - seconds * 1000).toISOString();
  const claimed = await ex
    .updateTable('cards')
    .set({ [column]: now.toISOString() })
    .where('id', '=', cardId)
    .where((eb) => eb.or([eb(column, 'is', null), eb(column, '<=', threshold)]))
    .executeTakeFirst();
  if (claimed.numUpdatedRows > 0n) return { claimed: true };
  const row = await ex.selectFrom('cards').select(column).where('id', '=', cardId).executeTakeFirstOrThrow();
  return { claimed: false, secondsLeft: secondsUntil(row[column], seconds, now) };
}

export function secondsUntil(lastAttempt: string | null, cooldownSeconds: number, now: Date): number {
  if (!lastAttempt) return 0;
  const endsAt = new Date(lastAttempt).getTime() + cooldownSeconds * 1000;
  return Math.max(1, Math.ceil((endsAt - now.getTime()) / 1000));
}

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === 'object' && value !== null && 'refusal' in value && value.refusal instanceof CardServiceError;
}

/** Returns the value, or throws the refusal the transaction committed with. */
export function unlessRefused<T>(result: T | Refusal): T {
  if (isRefusal(result)) throw result.refusal;
  return result;
}

/** The spec's withdrawal/closure cooldown refusal; the text names the configured minutes (never 0). */
export function withdrawCooldownError(secondsLeft: number, cooldownSeconds: number): CardServiceError<'WITHDRAW_COOLDOWN'> {
  return new CardServiceError('WITHDRAW_COOLDOWN', { seconds: secondsLeft, minutes: Math.max(1, Math.ceil(cooldownSeconds / 60)) });
}
