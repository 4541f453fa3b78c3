import type { CardRow, Executor } from '../../../db/schema.js';
import { isoTime } from '../../../infra/clock.js';
import type { DeclineCode } from '../../authorization/declines.js';
import type { AutoTopupOutcome } from '../../authorization/types.js';
import { newRecordId } from '../../ids.js';
import { platformFeeFor } from '../../ledger/fees.js';
import { postJournal, SYSTEM_ACCOUNTS } from '../../ledger/ledger.js';
import type { Cents } from '../../ledger/money.js';
import { accountBalance } from '../../operations/card-queries.js';
import { recordTopupLine } from '../../operations/card-records.js';
import { recordEvent } from '../../operations/events.js';
import { closing } from '../../operations/pending-operations.js';
import { withinPlanLimit } from '../../rules/rules.js';
import type { MoneyStoreDeps } from '../port.js';

/**
 * Auto top-up (issue 33, section 3), in the caller's transaction: a top-up like any other (the platform fee,
 * the plan's limit, the wallet's balance, a `Wallet top-up` line, the deposit raised) but exempt from the
 * cardholder's top-up cooldown. It runs (a) after a clearing leaves the card below `min_balance`, and (b)
 * during an authorization short of funds, once. Rate-limited per card: at most once every
 * `AUTO_TOPUP_EVERY_MS` (60 s, by `auto_topup_last_triggered`, set at every attempt, failed ones too), so a
 * merchant retrying a declined purchase, or a run of clearings, cannot drain the wallet or flood the chat in
 * a loop. An attempt is told to the chat (an `AutoTopupEvent`: done, or failed with why); one held back by
 * the rate limit is not. Only for an active card with no closure waiting on the
 * provider: money topped up onto a card being closed would only go back to the wallet, less the fee.
 */
export const AUTO_TOPUP_EVERY_MS = 60_000;

export type AutoTopupCard = Pick<
  CardRow,
  | 'id'
  | 'status'
  | 'user_id'
  | 'account_id'
  | 'category'
  | 'deposit'
  | 'limit_amount'
  | 'currency'
  | 'name'
  | 'masked_pan'
  | 'auto_topup_last_triggered'
>;

/**
 * Tops `amount` up onto the card from its owner's wallet, or records why it could not; null, doing nothing,
 * when the card may not have it (not active, or being closed). `declineCode`: the purchase's code should it
 * stay declined for this (an authorization's `insufficient_funds`), else null.
 */
export async function autoTopUp(
  trx: Executor,
  { systemAccounts, settings }: Pick<MoneyStoreDeps, 'systemAccounts' | 'settings'>,
  card: AutoTopupCard,
  wanted: Cents,
  now: Date,
  declineCode: DeclineCode | null,
): Promise<AutoTopupOutcome | null> {
  if (card.status !== 'active' || (await closing(trx, card.id))) return null;
  // No more than any top-up may be: the rest of a larger shortfall stays declined.
  const amount = Math.min(wanted, settings.topupMax);
  const last = card.auto_topup_last_triggered;
  // Told a minute ago already: nothing is recorded or pushed again.
  if (last !== null && now.getTime() - new Date(last).getTime() < AUTO_TOPUP_EVERY_MS)
    return { outcome: 'failed', amount, reason: 'rate_limited' };
  const at = isoTime(now);
  // The attempt counts, whatever it ends in: a failing one (wallet short, plan limit) is rate-limited too.
  await trx.updateTable('cards').set({ auto_topup_last_triggered: at, updated_at: at }).where('id', '=', card.id).execute();
  card.auto_topup_last_triggered = at;
  const { wallet_account_id: wallet } = await trx
    .selectFrom('users')
    .select('wallet_account_id')
    .where('id', '=', card.user_id)
    .executeTakeFirstOrThrow();
  let reason: AutoTopupOutcome['reason'] = null;
  let posted = null;
  if (!withinPlanLimit({ deposit: Number(card.deposit), limit: Number(card.limit_amount) }, amount)) reason = 'plan_limit';
  else {
    const fee = await platformFeeFor(trx, card.category, amount);
    const transactionId = newRecordId();
    posted = await postJournal(trx, {
      reference: `auto-topup:${transactionId}`,
      kind: 'topup',
      at,
      postings: [
        { accountId: wallet, amount: -(amount + fee) },
        { accountId: card.account_id, amount },
        { accountId: await systemAccounts(trx, SYSTEM_ACCOUNTS.revenue), amount: fee, system: true },
      ],
    });
    if (!posted) reason = 'wallet_short';
    else {
      await trx
        .updateTable('cards')
        .set((eb) => ({ deposit: eb('deposit', '+', amount) }))
        .where('id', '=', card.id)
        .execute();
      card.deposit = Number(card.deposit) + amount;
      await recordTopupLine(trx, {
        id: transactionId,
        cardId: card.id,
        userId: card.user_id,
        journalId: posted.journalId,
        amount,
        currency: card.currency,
        at,
      });
    }
  }
  const outcome: AutoTopupOutcome = { outcome: reason === null ? 'done' : 'failed', amount, reason };
  await recordEvent(
    trx,
    card.user_id,
    {
      kind: 'auto_topup',
      cardId: card.id,
      cardName: card.name,
      maskedPan: card.masked_pan,
      outcome: outcome.outcome,
      amount,
      reason,
      declineCode: reason === null ? null : declineCode,
      walletBalance: posted?.balances.get(wallet) ?? (await accountBalance(trx, wallet)),
      cardBalance: posted?.balances.get(card.account_id) ?? (await accountBalance(trx, card.account_id)),
      createdAt: at,
    },
    at,
  );
  return outcome;
}
