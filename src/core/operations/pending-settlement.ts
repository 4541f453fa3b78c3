import type { Db, Executor, PendingOperationRow } from '../../db/schema.js';
import { type CardProvider, type IssuedCard, ProviderError } from '../provider/provider.js';
import { postJournal, type PostedJournal } from '../ledger/ledger.js';
import type { Cents } from '../ledger/money.js';
import { lockedCardStatus } from './card-queries.js';
import { recordCardTransaction } from './card-records.js';

// Where a pending operation's hold goes once the operation is taken (src/core/operations/pending-operations.ts):
// on to its destination when it succeeded (`moveHeld`, `settleLine`), back where it came from when it failed (`release`).

/**
 * What the recovery does with an operation a crash left pending: settle it as failed (`release`), leave it
 * for a later recovery (`wait`: the provider could not be asked), or finish it as the provider shows it done
 * (`done`: a closure Lithic shows closed; `{ issued }`: a creation Lithic made the card for, with that card).
 */
export type PendingVerdict = 'release' | 'wait' | 'done' | { issued: IssuedCard };

/**
 * Whether the recovery must ask the provider about an operation of this kind before settling it: a
 * creation when the provider's issue can be repeated (`reissue`), a closure when it can tell a card's state
 * (`stateOf`). Such operations are left to the recovery that asks (the housekeeping's, and a new closure's
 * of the same card), not settled by a cardholder's next operation (`recoverStale`).
 */
export function providerIsAsked(provider: CardProvider | undefined, kind: PendingOperationRow['kind']): boolean {
  if (kind === 'create_card') return provider?.reissue !== undefined;
  if (kind === 'close') return provider?.stateOf !== undefined;
  return false;
}

/**
 * How long after a creation its issue may be repeated: within a day, the time Lithic keeps an `Idempotency-Key`'s
 * answer (docs.lithic.com, idempotent requests), less an hour.
 */
export const REISSUE_WITHIN_MS = 23 * 3_600_000;

/**
 * Asks a provider that can tell what became of an operation a crash left pending, before the recovery
 * settles it. A creation: the issue is repeated with the same reference (its idempotency key), so the
 * provider answers with the card the first one made, or makes it now: the creation is finished with that
 * card (`{ issued }`); refused, or the card closed there since, it is released; older than the provider keeps
 * the key (`REISSUE_WITHIN_MS`), it is released unasked. A closure: done when the provider shows the card closed (the
 * balance to the wallet, the card closed), released when it does not. A provider that cannot be reached now
 * leaves the operation pending. Other operations, and providers that keep nothing across a restart (the
 * sandbox), are released as they are.
 */
export async function askProviderFirst(db: Db, provider: CardProvider, op: PendingOperationRow, now: Date): Promise<PendingVerdict> {
  if (!providerIsAsked(provider, op.kind)) return 'release';
  // Past the provider's memory of the key, a repeated issue would make a second card: released unasked (a card
  // the first one made is then no card of ours, and an authorization on it is declined).
  if (op.kind === 'create_card' && now.getTime() - Date.parse(op.created_at) > REISSUE_WITHIN_MS) return 'release';
  try {
    const card = await db
      .selectFrom('cards')
      .innerJoin('bins', 'bins.id', 'cards.bin_id')
      .select(['cards.name', 'cards.type', 'cards.provider_card_id', 'bins.bin', 'bins.country'])
      .where('cards.id', '=', op.card_id)
      .executeTakeFirst();
    if (!card) return 'release';
    if (op.kind === 'close') return (await provider.stateOf!(card.provider_card_id)) === 'closed' ? 'done' : 'release';
    const request = { bin: card.bin, country: card.country, name: card.name, type: card.type, reference: op.card_id };
    const issued = await provider.reissue!(request);
    // The repeated answer is the first one, as it was then: a card closed at the provider since is not taken.
    if (issued.providerCardId !== null && provider.stateOf && (await provider.stateOf(issued.providerCardId)) === 'closed')
      return 'release';
    return { issued };
  } catch (error) {
    return error instanceof ProviderError && error.refused ? 'release' : 'wait';
  }
}

/** The in-flight system account's id, which holds what pending operations hold. */
export type InFlight = (trx: Executor) => Promise<number>;

/** Where `moveHeld` sends what an operation held: an account (`system` when a system account's), under a journal. */
export interface HeldDestination {
  accountId: number;
  system?: true;
  reference: string;
  kind: string;
  at: string;
}

/** Moves the operation's amount out of the in-flight account to `to.accountId`. */
export async function moveHeld(inFlight: InFlight, trx: Executor, op: PendingOperationRow, to: HeldDestination): Promise<PostedJournal> {
  const amount = Number(op.amount);
  const posted = await postJournal(trx, {
    reference: to.reference,
    kind: to.kind,
    at: to.at,
    postings: [
      to.system ? { accountId: to.accountId, amount, system: true } : { accountId: to.accountId, amount },
      { accountId: await inFlight(trx), amount: -amount, system: true },
    ],
  });
  if (!posted) throw new Error(`Pending operation ${op.id} could not be settled`);
  return posted;
}

/**
 * Turns the operation's `Pending` line `Approved`, the same line: its journal now the settling one,
 * its amount `amount` when given (a closure's, which takes what reached the card meanwhile too).
 * Returns its id, or null when the operation shows no line (it held nothing).
 */
export async function settleLine(
  trx: Executor,
  op: PendingOperationRow,
  to: { journalId: number; amount?: Cents; type?: string; at: string },
): Promise<string | null> {
  const settled = await trx
    .updateTable('card_transactions')
    .set({
      status: 'Approved',
      journal_id: to.journalId,
      ...(to.amount === undefined ? {} : { amount: to.amount, original_amount: to.amount }),
      ...(to.type === undefined ? {} : { type: to.type }),
      updated_at: to.at,
    })
    .where('id', '=', op.id)
    .where('status', '=', 'Pending')
    .executeTakeFirst();
  return settled.numUpdatedRows === 0n ? null : op.id;
}

/**
 * Gives back what a failed operation held, and the coupon redemption of a creation: its `Pending` line
 * removed, its `processing` card removed. A withdrawal whose card was closed meanwhile (a cooldown
 * shorter than the provider call) gives its amount to the wallet, as the closure would have, its line
 * turned into the closure's. An `interrupted`
 * operation (a crash between its transactions) also gives back its cooldown attempt, as a crash inside
 * one transaction did; one the provider refused keeps it counted.
 */
export async function release(inFlight: InFlight, trx: Executor, op: PendingOperationRow, at: string, interrupted = false): Promise<void> {
  if (op.account_id !== null && op.hold_journal_id !== null) await giveBackHeld(inFlight, trx, op, op.account_id, at);
  if (op.kind === 'create_card') await removeProcessingCard(trx, op.card_id);
  if (op.coupon_id !== null) {
    await trx
      .updateTable('coupons')
      .set((eb) => ({ redemptions: eb('redemptions', '-', 1) }))
      .where('id', '=', op.coupon_id)
      .where('redemptions', '>', 0)
      .execute();
  }
  if (interrupted && op.kind !== 'create_card') {
    // Unless a later attempt was claimed since. The one before this claim had passed its cooldown,
    // so forgetting it refuses nothing it would have allowed.
    await trx
      .updateTable('cards')
      .set({ last_withdraw_attempt_at: null })
      .where('id', '=', op.card_id)
      .where('last_withdraw_attempt_at', '=', op.created_at)
      .execute();
  }
}

/** The money part of `release`: back to `from`, the account it came from, or to the wallet when the card was closed meanwhile. */
async function giveBackHeld(inFlight: InFlight, trx: Executor, op: PendingOperationRow, from: number, at: string): Promise<void> {
  const closed = op.kind !== 'create_card' && (await lockedCardStatus(trx, op.card_id)) === 'closed';
  const owner = closed
    ? await trx
        .selectFrom('cards')
        .innerJoin('users', 'users.id', 'cards.user_id')
        .select(['users.wallet_account_id as wallet', 'cards.currency as currency'])
        .where('cards.id', '=', op.card_id)
        .executeTakeFirstOrThrow()
    : undefined;
  const released = await moveHeld(inFlight, trx, op, {
    accountId: owner?.wallet ?? from,
    reference: `release:${op.id}`,
    kind: `${op.kind}_release`,
    at,
  });
  if (!owner) {
    await trx.deleteFrom('card_transactions').where('id', '=', op.id).where('status', '=', 'Pending').execute();
    return;
  }
  // The held amount left the card for the wallet after all: its line stays, as the closure's.
  const settled = await settleLine(trx, op, { journalId: released.journalId, type: 'card_close', at });
  if (!settled) {
    await recordCardTransaction(trx, {
      cardId: op.card_id,
      userId: op.user_id,
      journalId: released.journalId,
      status: 'Approved',
      side: 'Debit',
      type: 'card_close',
      amount: Number(op.amount),
      currency: owner.currency,
      merchantName: 'Wallet',
      at,
    });
  }
}

/**
 * A creation released: its `processing` card goes, and the account written for it (nothing has moved
 * on either: the card takes money only once issued, and no statement line or code names it).
 */
async function removeProcessingCard(trx: Executor, cardId: string): Promise<void> {
  const removed = await trx
    .deleteFrom('cards')
    .where('id', '=', cardId)
    .where('status', '=', 'processing')
    .returning('account_id')
    .executeTakeFirst();
  if (removed) await trx.deleteFrom('accounts').where('id', '=', removed.account_id).execute();
}
