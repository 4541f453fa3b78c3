import type { Db } from '../../db/schema.js';
import type { Clock } from '../../infra/clock.js';
import type { MoneyStore } from '../money-store/port.js';
import type { CardProvider } from '../provider/provider.js';
import type { CoreSettings } from '../settings.js';
import { accountBalance, checkCardId, findOwnedCard } from './card-queries.js';
import type { PendingOperations } from './pending-operations.js';
import { newRecordId } from '../ids.js';
import type { OperationDeps } from '../deps.js';
import { platformFeeFor } from '../ledger/fees.js';
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
import type { TokenHolder } from './authentication.js';
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

/** What the movements need: the database and clock, the provider, the settings' bounds, the money store. */
export interface MovementDeps {
  db: Db;
  clock: Clock;
  provider: CardProvider;
  settings: CoreSettings;
  guard: ReturnType<typeof inputGuards>;
  pending: PendingOperations;
  money: MoneyStore;
}

/**
 * Money between the wallet and a card: top-ups (with their quote) and withdrawals. Each is a function
 * below taking what it needs; this factory binds them to the core's deps.
 */
export function createMovementOperations({ db, clock, provider, settings, pending, money }: OperationDeps) {
  const deps: MovementDeps = { db, clock, provider, settings, guard: inputGuards(settings), pending, money };
  return {
    quoteTopup: (caller: Caller, cardId: string, input: AmountInput) => quoteTopup(deps, caller, cardId, input),
    quoteWithdrawal: (caller: Caller, cardId: string, input?: Partial<AmountInput>) => quoteWithdrawal(deps, caller, cardId, input),
    topup: (who: Caller | TokenHolder, cardId: string, input: AmountInput, hooks?: OperationHooks<TopupResult>) =>
      topup(deps, who, cardId, input, hooks),
    withdraw: (caller: Caller, cardId: string, input: AmountInput, hooks?: OperationHooks<WithdrawResult>) =>
      withdraw(deps, caller, cardId, input, hooks),
  };
}

/**
 * What a top-up would cost, without attempting it (a quote starts no cooldown), and the refusal the
 * top-up would meet now, from the same named checks in the same order.
 */
export async function quoteTopup(
  { db, clock, settings, guard }: MovementDeps,
  caller: Caller,
  cardId: string,
  { amount }: AmountInput,
): Promise<TopupQuote> {
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
}

/**
 * What a withdrawal from the card may take now: its balance, and the cooldown's seconds left (0 when
 * none); with an amount, the refusal the withdrawal of it would meet now (the named checks, in order).
 */
export async function quoteWithdrawal(
  { db, clock, settings, guard }: MovementDeps,
  caller: Caller,
  cardId: string,
  input: Partial<AmountInput> = {},
): Promise<WithdrawalQuote> {
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
}

/**
 * Spec 4.6, checked in this order: card found, cooldown (the attempt then counts, whatever
 * refuses it next), card closed, plan limit, wallet. A token's holder is refused first if the token
 * is not valid (on Postgres by the top-up's own statement); invalid input is refused before that.
 */
export async function topup(
  { clock, guard, money }: MovementDeps,
  who: Caller | TokenHolder,
  cardId: string,
  { amount }: AmountInput,
  hooks: OperationHooks<TopupResult> = {},
): Promise<TopupResult> {
  checkCardId(cardId);
  guard.topup(amount);
  return money.topUp(who, cardId, amount, clock.now(), hooks);
}

/**
 * Spec 4.7, checked in this order: card found, cooldown (the attempt then counts, whatever
 * refuses it next), card closed, not ready, card balance, provider. The provider first, then the
 * wallet: the amount is held off the card before the provider is called (outside any transaction),
 * a `Pending` line on the card's statement, and reaches the wallet once it has withdrawn (the line
 * turned `Approved`); a provider refusal gives it back to the card (the line removed).
 */
export async function withdraw(
  { clock, provider, guard, pending, money }: MovementDeps,
  caller: Caller,
  cardId: string,
  { amount }: AmountInput,
  hooks: OperationHooks<WithdrawResult> = {},
): Promise<WithdrawResult> {
  guard.withdraw(amount);
  const now = clock.now();
  const hold = await money.holdWithdrawal({ caller, cardId, amount, operationId: newRecordId(), now });
  await pending.callProvider(hold.operationId, 'withdraw from', () => provider.withdraw(hold.card.provider_card_id, amount));
  return money.settleWithdrawal(hold, hooks);
}
