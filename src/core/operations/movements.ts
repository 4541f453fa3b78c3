import type { Executor } from '../../db/schema.js';
import { isoTime } from '../../infra/clock.js';
import { CardServiceError } from '../rules/errors.js';
import { topupOnce } from './topup-statement.js';
import { holdOnce, holdWithdrawal, settleWithdrawalOnce } from './withdraw-statements.js';
import { accountBalance, checkCardId, findOwnedCard } from './card-queries.js';
import { runAttempt } from '../rules/cooldowns.js';
import { newRecordId } from '../ids.js';
import type { OperationDeps } from '../deps.js';
import { platformFeeFor } from '../ledger/fees.js';
import { SYSTEM_ACCOUNTS } from '../ledger/ledger.js';
import { PENDING_GRACE_MS } from './pending-operations.js';
import {
  cardCoverRefusal,
  cooldownSecondsLeft,
  planLimitRefusal,
  topupCooldownRefusal,
  topupStateRefusal,
  walletCoverRefusal,
  withdrawCooldownRefusal,
  withdrawStateRefusal,
  withinPlanLimit,
  walletCovers,
} from '../rules/rules.js';
import { inputGuards, type AmountInput } from '../rules/schemas.js';
import type { OperationHooks } from '../service.js';
import type { Cents } from '../ledger/money.js';
import { isTokenHolder, type TokenHolder } from './authentication.js';
import type { Caller, TopupQuote, TopupResult, WithdrawalQuote, WithdrawResult } from './views.js';

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
export function createMovementOperations({
  db,
  clock,
  provider,
  settings,
  systemAccounts,
  onPostgres,
  pending,
  authentication,
  money,
}: OperationDeps) {
  const guard = inputGuards(settings);

  /**
   * Postgres: the top-up as one statement (`topupInOneStatement`), committed on its own, or with
   * `hooks.commit` in one transaction beside it. The same refusals, worded by the same named checks in
   * the same order, from what the statement found; a refusal after the cooldown still commits the attempt.
   */
  async function topupInOneRoundTrip(
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

  /**
   * Postgres: a withdrawal as two statements, one each side of the provider call (`holdWithdrawal`,
   * `settleWithdrawal`), each committed on its own or, the second, with `hooks.commit` beside it. The same
   * refusals from the same named checks in the same order. Undefined, having done nothing, when the caller
   * has operations pending past the grace period: the path that recovers them first takes over (rare).
   */
  async function withdrawInTwoRoundTrips(
    caller: Caller,
    cardId: string,
    amount: Cents,
    now: Date,
    hooks: OperationHooks<WithdrawResult>,
  ): Promise<WithdrawResult | undefined> {
    checkCardId(cardId);
    const inFlight = await pending.inFlightAccount(db);
    const at = isoTime(now);
    const operationId = newRecordId();
    const held = await holdOnce(
      holdWithdrawal,
      db,
      cardId,
      caller.userId,
      amount,
      at,
      isoTime(now.getTime() - settings.withdrawCooldownSeconds * 1000),
      isoTime(now.getTime() - PENDING_GRACE_MS),
      operationId,
      inFlight,
      `hold:${operationId}`,
    );
    if (held.stale) return undefined;
    const { card } = held;
    if (!card) throw new CardServiceError('CARD_NOT_FOUND');
    if (!card.cooled) throw withdrawCooldownRefusal(card.last_withdraw_attempt_at, settings, now, { refused: true });
    if (held.heldJournalId === undefined) {
      throw (
        withdrawStateRefusal({ status: card.status, provider_ready: card.providerReady }) ??
        cardCoverRefusal({ amount, available: card.available }, { refused: true })
      );
    }
    await pending.callProvider(operationId, 'withdraw from', () => provider.withdraw(card.provider_card_id, amount));
    return pending.finishWhole(
      operationId,
      async (ex) => {
        const settled = await settleWithdrawalOnce(ex, [
          operationId,
          caller.walletAccountId,
          inFlight,
          at,
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

  return {
    /**
     * What a top-up would cost, without attempting it (a quote starts no cooldown), and the refusal the
     * top-up would meet now, from the same named checks in the same order.
     */
    async quoteTopup(caller: Caller, cardId: string, { amount }: AmountInput): Promise<TopupQuote> {
      guard.topup(amount);
      const card = await findOwnedCard(db, caller, cardId);
      const platformFee = await platformFeeFor(db, card.category, amount);
      const walletBalance = await accountBalance(db, caller.walletAccountId);
      const plan = { deposit: Number(card.deposit), limit: Number(card.limit_amount) };
      const depositAvailable = plan.limit - plan.deposit;
      const now = clock.now();
      const fits = async (a: Cents) =>
        withinPlanLimit(plan, a) && walletCovers({ amount: a, fee: await platformFeeFor(db, card.category, a), available: walletBalance });
      const refusal =
        topupCooldownRefusal(card.last_topup_attempt_at, settings, now) ??
        topupStateRefusal(card) ??
        planLimitRefusal(plan, amount) ??
        walletCoverRefusal({ amount, fee: platformFee, available: walletBalance });
      return {
        cardId: card.id,
        category: card.category,
        amount,
        platformFee,
        totalCharged: amount + platformFee,
        walletBalance,
        depositAvailable,
        maxAmount: await largestFitting(Math.min(settings.topupMax, depositAvailable, walletBalance), fits),
        cooldownSeconds: cooldownSecondsLeft(card.last_topup_attempt_at, settings.topupCooldownSeconds, now),
        ...(refusal && { refusal: refusal.toPlain() }),
      };
    },

    /**
     * What a withdrawal from the card may take now: its balance, and the cooldown's seconds left (0 when
     * none); with an amount, the refusal the withdrawal of it would meet now (the named checks, in order).
     */
    async quoteWithdrawal(caller: Caller, cardId: string, input: Partial<AmountInput> = {}): Promise<WithdrawalQuote> {
      if (input.amount !== undefined) guard.withdraw(input.amount);
      const card = await findOwnedCard(db, caller, cardId);
      const cardBalance = Number(card.balance);
      const now = clock.now();
      const refusal =
        withdrawCooldownRefusal(card.last_withdraw_attempt_at, settings, now) ??
        withdrawStateRefusal(card) ??
        (input.amount === undefined ? undefined : cardCoverRefusal({ amount: input.amount, available: cardBalance }));
      return {
        cardId: card.id,
        cardBalance,
        maxAmount: Math.min(settings.withdrawMax, cardBalance),
        cooldownSeconds: cooldownSecondsLeft(card.last_withdraw_attempt_at, settings.withdrawCooldownSeconds, now),
        ...(refusal && { refusal: refusal.toPlain() }),
      };
    },

    /**
     * Spec 4.6, checked in this order: card found, cooldown (the attempt then counts, whatever
     * refuses it next), card closed, plan limit, wallet. A token's holder is refused first if the token
     * is not valid (on Postgres by the top-up's own statement); invalid input is refused before that.
     */
    async topup(
      who: Caller | TokenHolder,
      cardId: string,
      { amount }: AmountInput,
      hooks: OperationHooks<TopupResult> = {},
    ): Promise<TopupResult> {
      checkCardId(cardId);
      guard.topup(amount);
      if (onPostgres) return topupInOneRoundTrip(who, cardId, amount, clock.now(), hooks);
      return money.topUp(who, cardId, amount, clock.now(), hooks);
    },

    /**
     * Spec 4.7, checked in this order: card found, cooldown (the attempt then counts, whatever
     * refuses it next), card closed, not ready, card balance, provider. The provider first, then the
     * wallet: the amount is held off the card before the provider is called (outside any transaction),
     * a `Pending` line on the card's statement, and reaches the wallet once it has withdrawn (the line
     * turned `Approved`); a provider refusal gives it back to the card (the line removed).
     */
    async withdraw(
      caller: Caller,
      cardId: string,
      { amount }: AmountInput,
      hooks: OperationHooks<WithdrawResult> = {},
    ): Promise<WithdrawResult> {
      guard.withdraw(amount);
      const now = clock.now();
      if (onPostgres) {
        const done = await withdrawInTwoRoundTrips(caller, cardId, amount, now, hooks);
        if (done) return done;
      }
      const hold = await money.holdWithdrawal({ caller, cardId, amount, operationId: newRecordId(), now });
      await pending.callProvider(hold.operationId, 'withdraw from', () => provider.withdraw(hold.card.provider_card_id, amount));
      return money.settleWithdrawal(hold, hooks);
    },
  };
}
