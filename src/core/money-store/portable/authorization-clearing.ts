import type { Executor } from '../../../db/schema.js';
import { isoTime } from '../../../infra/clock.js';
import { autoTopupOf } from '../../authorization/controls.js';
import {
  AuthorizationError,
  type AutoTopupOutcome,
  type ClearingRequest,
  type ClearingResult,
  type PartialRelease,
  type ReleaseRequest,
  type ReleaseResult,
} from '../../authorization/types.js';
import { postJournal, SYSTEM_ACCOUNTS } from '../../ledger/ledger.js';
import type { Cents } from '../../ledger/money.js';
import { accountBalance, creditAccountOf, lockedBalance } from '../../operations/card-queries.js';
import type { MoneyStoreDeps } from '../port.js';
import { type AuthorizationRow, announce, byProviderId, type LockedCard, lockCard } from './authorization.js';
import { autoTopUp } from './authorization-topup.js';

// A held authorization cleared or released (`authorization/engine.ts`), a statement per step, each one
// transaction that locks the card's row before it reads the authorization again.

/**
 * A clearing may take up to 20 % more than was held (a tip, fuel, a hotel's extras: what card networks
 * allow for such merchants), the extra from the card's balance; more than that, or an extra the card (and
 * auto top-up) cannot cover, is refused and the hold stays.
 */
export const CLEARING_TOLERANCE_PERCENT = 20;

/** The authorization by its provider transaction id, read again once its card is locked (what a clearing or release beside this one did is then seen). */
async function lockedAuthorization(trx: Executor, providerTransactionId: string): Promise<{ row: AuthorizationRow; card: LockedCard }> {
  const [found] = (await byProviderId.execute(trx, providerTransactionId)).rows;
  if (!found) throw new AuthorizationError('unknown_transaction', `No authorization ${providerTransactionId}`);
  const card = await lockCard.executeTakeOne(trx, found.card_id);
  const row = (await byProviderId.executeTakeOne(trx, providerTransactionId)) as AuthorizationRow;
  return { row, card };
}

function notPending(row: AuthorizationRow): AuthorizationError {
  return new AuthorizationError('not_pending', `Transaction ${row.id} is ${row.status}, not pending`);
}

/** `MoneyStore.clearAuthorization`. */
export async function clearAuthorization(deps: MoneyStoreDeps, request: ClearingRequest): Promise<ClearingResult> {
  return deps.db.transaction().execute(async (trx) => {
    const { row, card } = await lockedAuthorization(trx, request.providerTransactionId);
    const held = Number(row.amount);
    const result = { authorizationId: row.id, cardId: card.id, held, closesCard: card.type === 'single_use', autoTopup: null };
    if (row.status === 'cleared') {
      const cardBalance = await accountBalance(trx, card.account_id);
      return { ...result, status: 'cleared', reason: null, clearedAmount: Number(row.cleared_amount), cardBalance, replayed: true };
    }
    // A clearing that comes after its hold was voided or expired (merchants clear late) is still owed: it is
    // settled from the card's balance when that covers it (no auto top-up), else refused as not pending.
    const late = row.status === 'voided' || row.status === 'expired';
    if (!late && row.status !== 'pending') throw notPending(row);
    const fromHold = late ? 0 : held;
    const cleared = request.amount ?? held;
    const extra = cleared - fromHold;
    const refused = (reason: ClearingResult['reason'], cardBalance: Cents, autoTopup: AutoTopupOutcome | null = null): ClearingResult => ({
      ...result,
      status: 'refused',
      reason,
      clearedAmount: 0,
      cardBalance,
      closesCard: false,
      autoTopup,
      replayed: false,
    });
    let autoTopup: AutoTopupOutcome | null = null;
    if ((cleared - held) * 100 > held * CLEARING_TOLERANCE_PERCENT) {
      if (late) throw notPending(row);
      return refused('over_tolerance', await accountBalance(trx, card.account_id));
    }
    if (extra > 0) {
      let available = await lockedBalance(trx, card.account_id);
      if (late && extra > available) throw notPending(row);
      const auto = autoTopupOf(card);
      if (extra > available && auto.enabled) {
        const topup = Math.max(auto.topupAmount, extra - available, deps.settings.topupMin);
        autoTopup = await autoTopUp(trx, deps, card, topup, request.now, 'insufficient_funds');
        if (autoTopup?.outcome === 'done') available += autoTopup.amount;
      }
      if (extra > available) return refused('insufficient_funds', available, autoTopup);
    }
    const at = isoTime(request.now);
    // Less than held: the rest is a credit, to the owner's wallet once the card is closed (`creditAccountOf`).
    const posted = await postJournal(trx, {
      reference: `clear:${row.id}`,
      kind: 'authorization_clearing',
      at,
      postings: [
        { accountId: extra < 0 ? await creditAccountOf(trx, card) : card.account_id, amount: -extra },
        { accountId: await deps.systemAccounts(trx, SYSTEM_ACCOUNTS.authorized), amount: -fromHold, system: true },
        { accountId: await deps.systemAccounts(trx, SYSTEM_ACCOUNTS.merchants), amount: cleared, system: true },
      ],
    });
    if (!posted) throw new Error('Card balance changed during clearing');
    await trx
      .updateTable('card_transactions')
      .set({ status: 'Approved', journal_id: posted.journalId, amount: cleared, original_amount: cleared, updated_at: at })
      .where('id', '=', row.id)
      .execute();
    await trx
      .updateTable('card_authorizations')
      .set({ status: 'cleared', cleared_amount: cleared, updated_at: at })
      .where('id', '=', row.id)
      .execute();
    let cardBalance = posted.balances.get(card.account_id) ?? (await accountBalance(trx, card.account_id));
    // Trigger (a): the clearing left the card below its minimum.
    const auto = autoTopupOf(card);
    if (auto.enabled && auto.topupAmount > 0 && cardBalance < auto.minBalance && card.type !== 'single_use') {
      autoTopup = await autoTopUp(trx, deps, card, auto.topupAmount, request.now, null);
      if (autoTopup?.outcome === 'done') cardBalance += autoTopup.amount;
    }
    if (request.announce) {
      await announce(trx, card, {
        transactionId: row.id,
        status: 'Approved',
        side: 'Debit',
        type: 'purchase',
        amount: cleared,
        currency: card.currency,
        merchantName: row.merchant_name,
        declineCode: null,
        cardBalance,
        createdAt: at,
      });
    }
    return { ...result, status: 'cleared', reason: null, clearedAmount: cleared, cardBalance, autoTopup, replayed: false };
  });
}

/** `MoneyStore.releaseAuthorization`: a void or an expiry. */
export async function releaseAuthorization(deps: MoneyStoreDeps, request: ReleaseRequest): Promise<ReleaseResult> {
  return deps.db.transaction().execute(async (trx) => {
    const { row, card } = await lockedAuthorization(trx, request.providerTransactionId);
    const amount = Number(row.amount);
    const result = { authorizationId: row.id, cardId: card.id, status: request.why, amount, stillHeld: 0 };
    // Released already (voided or expired): the same answer again, nothing moves.
    if (row.status === 'voided' || row.status === 'expired') {
      return { ...result, status: row.status, cardBalance: await accountBalance(trx, card.account_id), replayed: true };
    }
    if (request.part && row.status === 'pending' && request.part.amount < amount) {
      return releasePart(deps, trx, row, card, request.part, request.now);
    }
    if (row.status === 'cleared') {
      throw new AuthorizationError('not_pending', `Transaction ${row.id} is cleared: a clearing is not voided (a refund gives money back)`);
    }
    if (row.status !== 'pending') throw notPending(row);
    const at = isoTime(request.now);
    // A hold released on a card closed meanwhile goes to the owner's wallet (`creditAccountOf`). Released as a
    // part (all that is left of it), the journal carries the part's key, as `releasePart`'s does.
    const posted = await postJournal(trx, {
      reference: request.part ? partReference(row, request.part) : `release:${row.id}`,
      kind: 'authorization_release',
      at,
      postings: [
        { accountId: await creditAccountOf(trx, card), amount },
        { accountId: await deps.systemAccounts(trx, SYSTEM_ACCOUNTS.authorized), amount: -amount, system: true },
      ],
    });
    if (!posted) throw new Error('A release cannot be refused');
    await trx
      .updateTable('card_transactions')
      .set({ status: 'Reversed', journal_id: posted.journalId, updated_at: at })
      .where('id', '=', row.id)
      .execute();
    await trx.updateTable('card_authorizations').set({ status: request.why, updated_at: at }).where('id', '=', row.id).execute();
    const cardBalance = posted.balances.get(card.account_id) ?? (await accountBalance(trx, card.account_id));
    await announce(trx, card, {
      transactionId: row.id,
      status: 'Reversed',
      side: 'Debit',
      type: 'purchase',
      amount,
      currency: card.currency,
      merchantName: row.merchant_name,
      declineCode: null,
      cardBalance,
      createdAt: at,
    });
    return { ...result, cardBalance, replayed: false };
  });
}

/**
 * Part of a pending hold released (a partial reversal), once by its key: the amount back on the card (or the
 * owner's wallet, the card closed), the authorization and its `Pending` line lowered to what is still held,
 * which a clearing then settles; the chat is not told (the purchase is still pending). The same key again
 * answers what the first release did.
 */
async function releasePart(
  deps: MoneyStoreDeps,
  trx: Executor,
  row: AuthorizationRow,
  card: LockedCard,
  part: PartialRelease,
  now: Date,
): Promise<ReleaseResult> {
  const reference = partReference(row, part);
  const result = { authorizationId: row.id, cardId: card.id, status: 'pending' as const, amount: part.amount };
  const earlier = await trx.selectFrom('journals').select('id').where('reference', '=', reference).executeTakeFirst();
  if (earlier) {
    return { ...result, stillHeld: Number(row.amount), cardBalance: await accountBalance(trx, card.account_id), replayed: true };
  }
  const at = isoTime(now);
  const stillHeld = Number(row.amount) - part.amount;
  const posted = await postJournal(trx, {
    reference,
    kind: 'authorization_release',
    at,
    postings: [
      { accountId: await creditAccountOf(trx, card), amount: part.amount },
      { accountId: await deps.systemAccounts(trx, SYSTEM_ACCOUNTS.authorized), amount: -part.amount, system: true },
    ],
  });
  if (!posted) throw new Error('A release cannot be refused');
  await trx
    .updateTable('card_transactions')
    .set({ amount: stillHeld, original_amount: stillHeld, updated_at: at })
    .where('id', '=', row.id)
    .execute();
  await trx.updateTable('card_authorizations').set({ amount: stillHeld, updated_at: at }).where('id', '=', row.id).execute();
  const cardBalance = posted.balances.get(card.account_id) ?? (await accountBalance(trx, card.account_id));
  return { ...result, stillHeld, cardBalance, replayed: false };
}

/** The journal of a release by a key (`ReleaseRequest.part`): what it released is found by the key (`releasedUnder`). */
const partReference = (row: Pick<AuthorizationRow, 'id'>, part: Pick<PartialRelease, 'key'>) => `release-part:${row.id}:${part.key}`;

/** What releases under `key` gave back so far from these authorizations (a partial reversal's steps, across its holds). */
export async function releasedUnder(ex: Executor, authorizationIds: string[], key: string): Promise<Cents> {
  if (authorizationIds.length === 0) return 0;
  const row = await ex
    .selectFrom('journals')
    .innerJoin('entries', 'entries.journal_id', 'journals.id')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('entries.amount'), eb.lit(0)).as('released'))
    .where(
      'journals.reference',
      'in',
      authorizationIds.map((id) => partReference({ id }, { key })),
    )
    .where('entries.amount', '>', 0)
    .executeTakeFirst();
  return Number(row?.released ?? 0);
}
