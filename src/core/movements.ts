import { randomUUID } from 'node:crypto';
import { compiledOnce } from '../db/compiled-query.js';
import { accountBalance, checkCardId, findOwnedCard, lockedBalance } from './card-queries.js';
import { recordCardTransaction } from './card-records.js';
import { createCooldowns, runAttempt } from './cooldowns.js';
import { newRecordId } from './ids.js';
import type { CoreDeps } from './deps.js';
import { CardServiceError } from './errors.js';
import { platformFeeFor } from './fees.js';
import { postJournal, SYSTEM_ACCOUNTS, systemAccountId } from './ledger.js';
import { createPendingOperations } from './pending-operations.js';
import { inputGuards, type AmountInput } from './schemas.js';
import type { OperationHooks } from './service.js';
import type { Cents } from './money.js';
import type { Caller, TopupQuote, TopupResult, WithdrawalQuote, WithdrawResult } from './views.js';

// Compiled once, like the rest of the top-up's statements (see `compiledOnce`).
const addToDeposit = compiledOnce(3, (trx, amount: number, at: string, cardId: string) =>
  trx
    .updateTable('cards')
    .set((eb) => ({ deposit: eb('deposit', '+', amount), updated_at: at }))
    .where('id', '=', cardId),
);

/** Seconds until a cooldown that began at `last` has passed: 0 when it has. */
function secondsLeft(last: string | null, cooldownSeconds: number, now: Date): number {
  if (!last) return 0;
  return Math.max(0, Math.ceil((new Date(last).getTime() + cooldownSeconds * 1000 - now.getTime()) / 1000));
}

/** The largest amount from 0 to `upTo` that `fits` (which holds up to some amount, then never). */
async function largestFitting(upTo: Cents, fits: (amount: Cents) => Promise<boolean>): Promise<Cents> {
  let low = 0;
  let high = Math.max(0, upTo);
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (await fits(mid)) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** Money between the wallet and a card: top-ups (with their quote) and withdrawals. */
export function createMovementOperations({ db, clock, provider, settings }: CoreDeps) {
  let revenueAccount: number | undefined;
  const guard = inputGuards(settings);
  const cooldowns = createCooldowns(settings);
  const pending = createPendingOperations(db, clock);

  return {
    /** What a top-up would cost, without attempting it (a quote starts no cooldown). */
    async quoteTopup(caller: Caller, cardId: string, { amount }: AmountInput): Promise<TopupQuote> {
      guard.topup(amount);
      const card = await findOwnedCard(db, caller, cardId);
      const platformFee = await platformFeeFor(db, card.category, amount);
      const walletBalance = await accountBalance(db, caller.walletAccountId);
      const depositAvailable = Number(card.limit_amount) - Number(card.deposit);
      const fits = async (a: Cents) => a <= depositAvailable && a + (await platformFeeFor(db, card.category, a)) <= walletBalance;
      return {
        cardId: card.id,
        category: card.category,
        amount,
        platformFee,
        totalCharged: amount + platformFee,
        walletBalance,
        depositAvailable,
        maxAmount: await largestFitting(Math.min(settings.topupMax, depositAvailable, walletBalance), fits),
        cooldownSeconds: secondsLeft(card.last_topup_attempt_at, settings.topupCooldownSeconds, clock.now()),
      };
    },

    /** What a withdrawal from the card may take now: its balance, and the cooldown's seconds left (0 when none). */
    async quoteWithdrawal(caller: Caller, cardId: string): Promise<WithdrawalQuote> {
      const card = await findOwnedCard(db, caller, cardId);
      const cardBalance = Number(card.balance);
      return {
        cardId: card.id,
        cardBalance,
        maxAmount: Math.min(settings.withdrawMax, cardBalance),
        cooldownSeconds: secondsLeft(card.last_withdraw_attempt_at, settings.withdrawCooldownSeconds, clock.now()),
      };
    },

    /**
     * Spec 4.6, checked in this order: card found, cooldown (the attempt then counts, whatever
     * refuses it next), card closed, plan limit, wallet.
     */
    async topup(caller: Caller, cardId: string, { amount }: AmountInput, hooks: OperationHooks<TopupResult> = {}): Promise<TopupResult> {
      checkCardId(cardId);
      guard.topup(amount);
      const now = clock.now();
      const at = now.toISOString();
      return runAttempt(
        db,
        async (trx) => {
          const card = await cooldowns.topup.claim(trx, caller, cardId, now);
          if (card.status === 'closed') throw new CardServiceError('CARD_CLOSED');
          const deposit = Number(card.deposit);
          const limit = Number(card.limit_amount);
          if (deposit + amount > limit) {
            throw new CardServiceError('CARD_LIMIT_EXCEEDED', { deposit, limit, available: Math.max(0, limit - deposit) });
          }
          const fee = await platformFeeFor(trx, card.category, amount);
          const total = amount + fee;
          const transactionId = newRecordId();
          revenueAccount ??= await systemAccountId(trx, SYSTEM_ACCOUNTS.revenue);
          const posted = await postJournal(trx, {
            reference: `topup:${transactionId}`,
            kind: 'topup',
            at,
            postings: [
              { accountId: caller.walletAccountId, amount: -total },
              { accountId: card.account_id, amount },
              { accountId: revenueAccount, amount: fee, system: true },
            ],
          });
          if (!posted) {
            const available = await accountBalance(trx, caller.walletAccountId);
            throw new CardServiceError('INSUFFICIENT_WALLET_BALANCE', { total, amount, fee, available });
          }
          await addToDeposit.execute(trx, amount, at, cardId);
          await recordCardTransaction(trx, {
            id: transactionId,
            cardId,
            userId: caller.userId,
            journalId: posted.journalId,
            status: 'Approved',
            side: 'Credit',
            type: 'topup',
            amount,
            currency: card.currency,
            merchantName: 'Wallet top-up',
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
    },

    /**
     * Spec 4.7, checked in this order: card found, cooldown (the attempt then counts, whatever
     * refuses it next), card closed, not ready, card balance, provider. The provider first, then the
     * wallet: the amount is held off the card before the provider is called (outside any transaction)
     * and reaches the wallet once it has withdrawn; a provider refusal gives it back to the card.
     */
    async withdraw(
      caller: Caller,
      cardId: string,
      { amount }: AmountInput,
      hooks: OperationHooks<WithdrawResult> = {},
    ): Promise<WithdrawResult> {
      guard.withdraw(amount);
      const now = clock.now();
      const at = now.toISOString();
      const operationId = randomUUID();
      const card = await runAttempt(db, async (trx) => {
        await pending.recoverStale(trx, caller.userId, now);
        const card = await cooldowns.withdrawal.claim(trx, caller, cardId, now);
        if (card.status === 'closed') throw new CardServiceError('CARD_CLOSED');
        if (!card.provider_ready) throw new CardServiceError('CARD_NOT_READY_WITHDRAW');
        const available = await lockedBalance(trx, card.account_id);
        if (amount > available) throw new CardServiceError('INSUFFICIENT_CARD_BALANCE', { available, requested: amount });
        const held = await pending.hold(trx, {
          id: operationId,
          kind: 'withdraw',
          userId: caller.userId,
          cardId: card.id,
          accountId: card.account_id,
          amount,
          at,
        });
        if (!held) throw new CardServiceError('INSUFFICIENT_CARD_BALANCE', { available, requested: amount });
        return card;
      });
      await pending.callProvider(operationId, 'withdraw from', () => provider.withdraw(card.provider_card_id, amount));
      return pending.finish(
        operationId,
        async (trx, operation) => {
          const posted = await pending.settleHold(trx, operation, {
            accountId: caller.walletAccountId,
            reference: `withdraw:${operationId}`,
            kind: 'withdrawal',
            at,
          });
          const transactionId = await recordCardTransaction(trx, {
            cardId: card.id,
            userId: caller.userId,
            journalId: posted.journalId,
            status: 'Approved',
            side: 'Debit',
            type: 'withdrawal',
            amount,
            currency: card.currency,
            merchantName: 'Wallet',
            at,
          });
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
    },
  };
}
