import { randomUUID } from 'node:crypto';
import { compiledOnce } from '../db/compiled-query.js';
import {
  accountBalance,
  checkCardId,
  claimCooldown,
  findOwnedCard,
  lockedBalance,
  secondsUntil,
  unlessRefused,
  withdrawCooldownError,
} from './card-queries.js';
import { recordCardTransaction } from './card-records.js';
import type { CoreDeps } from './deps.js';
import { CardServiceError, refuse, type Refusal } from './errors.js';
import { platformFeeFor } from './fees.js';
import { postJournal, SYSTEM_ACCOUNTS, systemAccountId } from './ledger.js';
import { ProviderError } from './provider.js';
import { inputGuards, type AmountInput } from './schemas.js';
import type { OperationHooks } from './service.js';
import type { Caller, TopupQuote, TopupResult, WithdrawResult } from './views.js';

// The top-up's own statements, compiled once (the hot path of the service).
const claimTopupAttempt = compiledOnce(4, (trx, at: string, cardId: string, userId: string, threshold: string) =>
  trx
    .updateTable('cards')
    .set({ last_topup_attempt_at: at })
    .where('id', '=', cardId)
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('last_topup_attempt_at', 'is', null), eb('last_topup_attempt_at', '<=', threshold)]))
    .returning(['account_id', 'status', 'category', 'deposit', 'limit_amount', 'currency']),
);

const addToDeposit = compiledOnce(3, (trx, amount: number, at: string, cardId: string) =>
  trx
    .updateTable('cards')
    .set((eb) => ({ deposit: eb('deposit', '+', amount), updated_at: at }))
    .where('id', '=', cardId),
);

/** Money between the wallet and a card: top-ups (with their quote) and withdrawals. */
export function createMovementOperations({ db, clock, provider, settings }: CoreDeps) {
  let revenueAccount: number | undefined;
  const guard = inputGuards(settings);

  return {
    /** What a top-up would cost, without attempting it (a quote starts no cooldown). */
    async quoteTopup(caller: Caller, cardId: string, { amount }: AmountInput): Promise<TopupQuote> {
      guard.topup(amount);
      const card = await findOwnedCard(db, caller, cardId);
      const platformFee = await platformFeeFor(db, card.category, amount);
      return {
        cardId: card.id,
        category: card.category,
        amount,
        platformFee,
        totalCharged: amount + platformFee,
        walletBalance: await accountBalance(db, caller.walletAccountId),
        depositAvailable: Number(card.limit_amount) - Number(card.deposit),
      };
    },

    /**
     * Spec 4.6. The attempt starts the card's cooldown once the card is found; a later refusal
     * (limit, wallet) still commits that, and nothing else.
     */
    async topup(caller: Caller, cardId: string, { amount }: AmountInput, hooks: OperationHooks<TopupResult> = {}): Promise<TopupResult> {
      checkCardId(cardId);
      guard.topup(amount);
      const now = clock.now();
      const at = now.toISOString();
      const result = await db.transaction().execute(async (trx): Promise<TopupResult | Refusal> => {
        const threshold = new Date(now.getTime() - settings.topupCooldownSeconds * 1000).toISOString();
        const [card] = (await claimTopupAttempt.execute(trx, at, cardId, caller.userId, threshold)).rows;
        if (!card) {
          const owned = await findOwnedCard(trx, caller, cardId);
          const seconds = secondsUntil(owned.last_topup_attempt_at, settings.topupCooldownSeconds, now);
          throw new CardServiceError('TOPUP_COOLDOWN', { seconds });
        }
        if (card.status === 'closed') return refuse('CARD_CLOSED');

        const deposit = Number(card.deposit);
        const limit = Number(card.limit_amount);
        if (deposit + amount > limit) {
          return refuse('CARD_LIMIT_EXCEEDED', { deposit, limit, available: Math.max(0, limit - deposit) });
        }
        const fee = await platformFeeFor(trx, card.category, amount);
        const total = amount + fee;
        const transactionId = randomUUID();
        revenueAccount ??= await systemAccountId(trx, SYSTEM_ACCOUNTS.revenue);
        const posted = await postJournal(trx, {
          reference: `topup:${transactionId}`,
          kind: 'topup',
          at,
          postings: [
            { accountId: caller.walletAccountId, amount: -total },
            { accountId: card.account_id, amount },
            { accountId: revenueAccount, amount: fee },
          ],
        });
        if (!posted) {
          const available = await accountBalance(trx, caller.walletAccountId);
          return refuse('INSUFFICIENT_WALLET_BALANCE', { total, amount, fee, available });
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
        const done: TopupResult = {
          cardId,
          transactionId,
          invoiceId: posted.journalId,
          walletBalance: posted.balances.get(caller.walletAccountId) ?? 0,
          totalCharged: total,
          platformFee: fee,
          newCardBalance: posted.balances.get(card.account_id) ?? 0,
        };
        await hooks.commit?.(trx, done);
        return done;
      });
      return unlessRefused(result);
    },

    /** Spec 4.7: the provider first, then the wallet, in one transaction; the attempt starts the cooldown. */
    async withdraw(
      caller: Caller,
      cardId: string,
      { amount }: AmountInput,
      hooks: OperationHooks<WithdrawResult> = {},
    ): Promise<WithdrawResult> {
      guard.withdraw(amount);
      const now = clock.now();
      const at = now.toISOString();
      const result = await db.transaction().execute(async (trx): Promise<WithdrawResult | Refusal> => {
        const card = await findOwnedCard(trx, caller, cardId);
        const cooldown = await claimCooldown(trx, card.id, 'last_withdraw_attempt_at', settings.withdrawCooldownSeconds, now);
        if (!cooldown.claimed) throw withdrawCooldownError(cooldown.secondsLeft, settings.withdrawCooldownSeconds);
        if (card.status === 'closed') return refuse('CARD_CLOSED');
        if (!card.provider_ready) return refuse('CARD_NOT_READY_WITHDRAW');
        const available = await lockedBalance(trx, card.account_id);
        if (amount > available) return refuse('INSUFFICIENT_CARD_BALANCE', { available, requested: amount });
        try {
          await provider.withdraw(card.provider_card_id, amount);
        } catch (error) {
          if (error instanceof ProviderError) {
            return refuse('PROVIDER_FAILED', { action: 'withdraw from', reason: error.message });
          }
          throw error;
        }
        const posted = await postJournal(trx, {
          reference: `withdraw:${randomUUID()}`,
          kind: 'withdrawal',
          at,
          postings: [
            { accountId: card.account_id, amount: -amount },
            { accountId: caller.walletAccountId, amount },
          ],
        });
        if (!posted) return refuse('INSUFFICIENT_CARD_BALANCE', { available, requested: amount });
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
        const done: WithdrawResult = {
          cardId: card.id,
          transactionId,
          invoiceId: posted.journalId,
          walletBalance: posted.balances.get(caller.walletAccountId) ?? 0,
          newCardBalance: posted.balances.get(card.account_id) ?? 0,
          amountWithdrawn: amount,
        };
        await hooks.commit?.(trx, done);
        return done;
      });
      return unlessRefused(result);
    },
  };
}
