import { compiledOnce } from '../../../db/compiled-query.js';
import { isoTime } from '../../../infra/clock.js';
import { newRecordId } from '../../ids.js';
import { platformFeeFor } from '../../ledger/fees.js';
import { postJournal, SYSTEM_ACCOUNTS } from '../../ledger/ledger.js';
import type { Cents } from '../../ledger/money.js';
import type { TokenHolder } from '../../operations/authentication.js';
import { accountBalance, lockedBalance } from '../../operations/card-queries.js';
import { recordTopupLine } from '../../operations/card-records.js';
import type { Caller, TopupResult, WithdrawResult } from '../../operations/views.js';
import { runAttempt } from '../../rules/cooldowns.js';
import { cardCoverRefusal, planLimitRefusal, topupStateRefusal, walletCoverRefusal, withdrawStateRefusal } from '../../rules/rules.js';
import type { OperationHooks } from '../../service.js';
import type { MoneyStoreDeps, WithdrawalHold, WithdrawalRequest } from '../port.js';

// Money between the wallet and a card (`operations/movements.ts`), a statement per step.

// Compiled once, like the rest of the top-up's statements (see `compiledOnce`).
const addToDeposit = compiledOnce(3, (trx, amount: number, at: string, cardId: string) =>
  trx
    .updateTable('cards')
    .set((eb) => ({ deposit: eb('deposit', '+', amount), updated_at: at }))
    .where('id', '=', cardId),
);

/** `MoneyStore.topUp`: checked in spec 4.6's order; the cooldown's claim commits whatever refuses after it (`runAttempt`). */
export async function topUp(
  { db, systemAccounts, cooldowns, authentication }: MoneyStoreDeps,
  who: Caller | TokenHolder,
  cardId: string,
  amount: Cents,
  now: Date,
  hooks: OperationHooks<TopupResult>,
): Promise<TopupResult> {
  const caller = await authentication.resolve(who);
  const at = isoTime(now);
  return runAttempt(
    db,
    async (trx) => {
      const card = await cooldowns.topup.claim(trx, caller, cardId, now);
      const refused =
        topupStateRefusal(card) ?? planLimitRefusal({ deposit: Number(card.deposit), limit: Number(card.limit_amount) }, amount);
      if (refused) throw refused;
      const fee = await platformFeeFor(trx, card.category, amount);
      const total = amount + fee;
      const transactionId = newRecordId();
      const revenue = await systemAccounts(trx, SYSTEM_ACCOUNTS.revenue);
      const posted = await postJournal(trx, {
        reference: `topup:${transactionId}`,
        kind: 'topup',
        at,
        postings: [
          { accountId: caller.walletAccountId, amount: -total },
          { accountId: card.account_id, amount },
          { accountId: revenue, amount: fee, system: true },
        ],
      });
      if (!posted) {
        // The conditional posting decided (the wallet cannot cover it); the named check words the refusal.
        const available = await accountBalance(trx, caller.walletAccountId);
        throw walletCoverRefusal({ amount, fee, available }, { refused: true });
      }
      await addToDeposit.execute(trx, amount, at, cardId);
      await recordTopupLine(trx, {
        id: transactionId,
        cardId,
        userId: caller.userId,
        journalId: posted.journalId,
        amount,
        currency: card.currency,
        at,
      });
      return {
        cardId,
        transactionId,
        invoiceId: posted.journalId,
        walletBalance: posted.balances.get(caller.walletAccountId) ?? 0,
        totalCharged: total,
        platformFee: fee,
        newCardBalance: posted.balances.get(card.account_id) ?? 0,
      };
    },
    hooks,
  );
}

/**
 * `MoneyStore.holdWithdrawal`: the caller's stale operations recovered first, then checked in spec 4.7's
 * order; the amount held (`pending.hold`) or the card-cover refusal.
 */
export async function holdWithdrawal({ db, pending, cooldowns }: MoneyStoreDeps, request: WithdrawalRequest): Promise<WithdrawalHold> {
  const { caller, cardId, amount, operationId, now } = request;
  const at = isoTime(now);
  const card = await runAttempt(db, async (trx) => {
    await pending.recoverStale(trx, caller.userId, now);
    const card = await cooldowns.withdrawal.claim(trx, caller, cardId, now);
    const unready = withdrawStateRefusal(card);
    if (unready) throw unready;
    const available = await lockedBalance(trx, card.account_id);
    const uncovered = cardCoverRefusal({ amount, available });
    if (uncovered) throw uncovered;
    const held = await pending.hold(trx, {
      id: operationId,
      kind: 'withdraw',
      userId: caller.userId,
      cardId: card.id,
      accountId: card.account_id,
      amount,
      line: { type: 'withdrawal', currency: card.currency, merchantName: 'Wallet' },
      at,
    });
    // The conditional hold decided; the named check words the refusal.
    if (!held) throw cardCoverRefusal({ amount, available }, { refused: true });
    return card;
  });
  return { ...request, card };
}

/** `MoneyStore.settleWithdrawal`: the operation taken (`pending.finish`), its hold onto the wallet, its line `Approved`. */
export async function settleWithdrawal(
  { pending }: MoneyStoreDeps,
  { caller, card, amount, operationId, now }: WithdrawalHold,
  hooks: OperationHooks<WithdrawResult>,
): Promise<WithdrawResult> {
  const at = isoTime(now);
  return pending.finish(
    operationId,
    async (trx, operation) => {
      const posted = await pending.settleHold(trx, operation, {
        accountId: caller.walletAccountId,
        reference: `withdraw:${operationId}`,
        kind: 'withdrawal',
        at,
      });
      const transactionId = await pending.settleLine(trx, operation, { journalId: posted.journalId, at });
      if (transactionId === null) throw new Error(`Withdrawal ${operationId} has no pending line`);
      return {
        cardId: card.id,
        transactionId,
        invoiceId: posted.journalId,
        walletBalance: posted.balances.get(caller.walletAccountId) ?? 0,
        newCardBalance: await accountBalance(trx, card.account_id),
        amountWithdrawn: amount,
      };
    },
    hooks,
  );
}
