import type { Executor } from '../../../db/schema.js';
import { isoTime } from '../../../infra/clock.js';
import { newRecordId } from '../../ids.js';
import { SYSTEM_ACCOUNTS } from '../../ledger/ledger.js';
import type { Cents } from '../../ledger/money.js';
import { isTokenHolder, type TokenHolder } from '../../operations/authentication.js';
import { checkCardId } from '../../operations/card-queries.js';
import { PENDING_GRACE_MS } from '../../operations/pending-operations.js';
import type { Caller, TopupResult, WithdrawResult } from '../../operations/views.js';
import { runAttempt } from '../../rules/cooldowns.js';
import { CardServiceError } from '../../rules/errors.js';
import {
  cardCoverRefusal,
  planLimitRefusal,
  topupCooldownRefusal,
  topupStateRefusal,
  walletCoverRefusal,
  withdrawCooldownRefusal,
  withdrawStateRefusal,
} from '../../rules/rules.js';
import type { OperationHooks } from '../../service.js';
import type { MoneyStore, MoneyStoreDeps, WithdrawalHold, WithdrawalRequest } from '../port.js';
import { topupOnce } from './topup-statement.js';
import { holdOnce, holdWithdrawal as holdStatement, settleWithdrawalOnce } from './withdraw-statements.js';

// Money between the wallet and a card (`operations/movements.ts`), each transaction one statement.

/**
 * `MoneyStore.topUp` as one statement (`topupInOneStatement`), committed on its own, or with `hooks.commit`
 * in one transaction beside it. The same refusals, worded by the same named checks in the same order, from
 * what the statement found; a refusal after the cooldown still commits the attempt. A token's holder is
 * checked by the statement itself.
 */
export async function topUp(
  { db, settings, systemAccounts, authentication }: MoneyStoreDeps,
  who: Caller | TokenHolder,
  cardId: string,
  amount: Cents,
  now: Date,
  hooks: OperationHooks<TopupResult>,
): Promise<TopupResult> {
  const revenue = await systemAccounts(db, SYSTEM_ACCOUNTS.revenue);
  const threshold = isoTime(now.getTime() - settings.topupCooldownSeconds * 1000);
  const transactionId = newRecordId();
  const work = async (ex: Executor): Promise<TopupResult> => {
    const at = isoTime(now);
    const outcome = await topupOnce(ex, who, [cardId, amount, at, threshold, revenue, transactionId, `topup:${transactionId}`]);
    const { caller, tokenUse, card, moved, walletAvailable } = outcome;
    if (!caller) throw new CardServiceError('INVALID_TOKEN');
    if (isTokenHolder(who)) {
      who.authenticated(caller);
      // After the money moved: a failure to write the last use must not fail the top-up (the next use retries it).
      if (tokenUse) await authentication.noteUse(tokenUse).catch(() => undefined);
    }
    if (!card) throw new CardServiceError('CARD_NOT_FOUND');
    if (!card.cooled) throw topupCooldownRefusal(card.last_topup_attempt_at, settings, now, { refused: true });
    if (!moved) {
      throw (
        topupStateRefusal(card) ??
        planLimitRefusal(card, amount) ??
        walletCoverRefusal({ amount, fee: card.fee, available: walletAvailable }, { refused: true })
      );
    }
    return {
      cardId,
      transactionId,
      invoiceId: moved.journalId,
      walletBalance: moved.walletBalance,
      totalCharged: amount + card.fee,
      platformFee: card.fee,
      newCardBalance: moved.cardBalance,
    };
  };
  return hooks.commit ? runAttempt(db, work, hooks) : work(db);
}

/** The holds `holdWithdrawal` left to the portable store (the caller had stale operations): their settling is its too. */
const heldInSteps = new WeakSet<WithdrawalHold>();

/**
 * `MoneyStore.holdWithdrawal` as one statement (`holdWithdrawal` of `withdraw-statements.ts`), committed on
 * its own. The same refusals from the same named checks in the same order. When the caller has operations
 * pending past the grace period the statement does nothing, and the portable store, which recovers them
 * first, holds instead (rare).
 */
export async function holdWithdrawal(
  { db, settings, pending }: MoneyStoreDeps,
  steps: MoneyStore,
  request: WithdrawalRequest,
): Promise<WithdrawalHold> {
  const { caller, cardId, amount, operationId, now } = request;
  checkCardId(cardId);
  const inFlight = await pending.inFlightAccount(db);
  const held = await holdOnce(
    holdStatement,
    db,
    cardId,
    caller.userId,
    amount,
    isoTime(now),
    isoTime(now.getTime() - settings.withdrawCooldownSeconds * 1000),
    isoTime(now.getTime() - PENDING_GRACE_MS),
    operationId,
    inFlight,
    `hold:${operationId}`,
  );
  if (held.stale) {
    const hold = await steps.holdWithdrawal(request);
    heldInSteps.add(hold);
    return hold;
  }
  const { card } = held;
  if (!card) throw new CardServiceError('CARD_NOT_FOUND');
  if (!card.cooled) throw withdrawCooldownRefusal(card.last_withdraw_attempt_at, settings, now, { refused: true });
  if (held.heldJournalId === undefined) {
    throw (
      withdrawStateRefusal({ status: card.status, provider_ready: card.providerReady }) ??
      cardCoverRefusal({ amount, available: card.available }, { refused: true })
    );
  }
  return { ...request, card: { id: cardId, account_id: card.account_id, provider_card_id: card.provider_card_id } };
}

/**
 * `MoneyStore.settleWithdrawal` as one statement (`settleWithdrawal`), committed on its own or with
 * `hooks.commit` beside it.
 */
export async function settleWithdrawal(
  { pending }: MoneyStoreDeps,
  steps: MoneyStore,
  hold: WithdrawalHold,
  hooks: OperationHooks<WithdrawResult>,
): Promise<WithdrawResult> {
  if (heldInSteps.has(hold)) return steps.settleWithdrawal(hold, hooks);
  const { caller, cardId, card, amount, operationId, now } = hold;
  return pending.finishWhole(
    operationId,
    async (ex) => {
      const settled = await settleWithdrawalOnce(ex, [
        operationId,
        caller.walletAccountId,
        await pending.inFlightAccount(ex),
        isoTime(now),
        `withdraw:${operationId}`,
        card.account_id,
      ]);
      if (!settled.taken) throw new Error(`Pending operation ${operationId} was settled by the recovery meanwhile`);
      if (settled.transactionId === undefined) throw new Error(`Withdrawal ${operationId} has no pending line`);
      return {
        cardId,
        transactionId: settled.transactionId,
        invoiceId: settled.journalId!,
        walletBalance: settled.walletBalance!,
        newCardBalance: settled.cardBalance!,
        amountWithdrawn: amount,
      };
    },
    hooks,
  );
}
