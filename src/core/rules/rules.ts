import { CardServiceError } from './errors.js';
import type { Cents } from '../ledger/money.js';
import { toAmount } from '../ledger/money.js';
import { validationError } from './schemas.js';
import type { CoreSettings } from '../settings.js';
import type { ZodType } from 'zod';

/**
 * The spec's rules as named checks, each pure: given the figures, the refusal the operation gives (with
 * those figures) or undefined when the rule passes. The operations, their quotes and card creation all
 * call them, so a quote's `refusal` is the operation's own. Where the database decides by a conditional
 * update (race-safe money), the update still decides; the check, told so (`refused`), builds the refusal
 * from the figures read after it.
 */

/** The database already refused (a conditional update changed nothing): the refusal is built whatever the figures read since. */
interface Decided {
  refused?: boolean;
}

/** `planLimitRefusal`'s rule alone, for a search over many amounts (the quote's `maxAmount`) that needs no refusal built. */
export const withinPlanLimit = (card: { deposit: Cents; limit: Cents }, amount: Cents): boolean => card.deposit + amount <= card.limit;

/** `walletCoverRefusal`'s rule alone, for the same search. */
export const walletCovers = ({ amount, fee, available }: { amount: Cents; fee: Cents; available: Cents }): boolean =>
  amount + fee <= available;

/** A deposit onto a card within its plan's limit (spec 4.6): `CARD_LIMIT_EXCEEDED`. */
export function planLimitRefusal(
  card: { deposit: Cents; limit: Cents },
  amount: Cents,
): CardServiceError<'CARD_LIMIT_EXCEEDED'> | undefined {
  const { deposit, limit } = card;
  if (withinPlanLimit(card, amount)) return undefined;
  return new CardServiceError('CARD_LIMIT_EXCEEDED', { deposit, limit, available: Math.max(0, limit - deposit) });
}

/**
 * The BIN's initial balance is deposited at creation, and a card's deposit never exceeds its plan's limit
 * (the `cards_deposit_within_limit` check): a pair whose initial balance is above the limit can issue no
 * card. Asked before the provider is, so that such a pair is a refusal, not an issued card left unwritten;
 * the admin's warnings list the pairs it refuses.
 *
 * @example initialBalanceRefusal({ initialBalance: 500 }, { limit: 100_000 }) // undefined
 */
export function initialBalanceRefusal(
  bin: { initialBalance: Cents },
  plan: { limit: Cents },
): CardServiceError<'INITIAL_BALANCE_OVER_LIMIT'> | undefined {
  if (bin.initialBalance <= plan.limit) return undefined;
  return new CardServiceError('INITIAL_BALANCE_OVER_LIMIT', { initialBalance: bin.initialBalance, limit: plan.limit });
}

/** The wallet covers a top-up and its platform fee (spec 4.6): `INSUFFICIENT_WALLET_BALANCE`. */
export function walletCoverRefusal(
  figures: { amount: Cents; fee: Cents; available: Cents },
  { refused = false }: Decided = {},
): CardServiceError<'INSUFFICIENT_WALLET_BALANCE'> | undefined {
  const { amount, fee, available } = figures;
  const total = amount + fee;
  if (!refused && walletCovers(figures)) return undefined;
  return new CardServiceError('INSUFFICIENT_WALLET_BALANCE', { total, amount, fee, available });
}

/** The card holds what a withdrawal takes (spec 4.7): `INSUFFICIENT_CARD_BALANCE`. */
export function cardCoverRefusal(
  figures: { amount: Cents; available: Cents },
  { refused = false }: Decided = {},
): CardServiceError<'INSUFFICIENT_CARD_BALANCE'> | undefined {
  const { amount, available } = figures;
  if (!refused && amount <= available) return undefined;
  return new CardServiceError('INSUFFICIENT_CARD_BALANCE', { available, requested: amount });
}

/**
 * Seconds until a cooldown that began at `last` has passed: 0 when it has (or never began), else the
 * seconds left rounded up, so never 0 while it runs. The one count the quotes and the refusals give.
 */
export function cooldownSecondsLeft(last: string | Date | null, cooldownSeconds: number, now: Date): number {
  if (!last) return 0;
  return Math.max(0, Math.ceil((new Date(last).getTime() + cooldownSeconds * 1000 - now.getTime()) / 1000));
}

/** The withdrawal cooldown in the minutes its refusal names (never 0). */
export function withdrawCooldownMinutes(settings: Pick<CoreSettings, 'withdrawCooldownSeconds'>): number {
  return Math.max(1, Math.ceil(settings.withdrawCooldownSeconds / 60));
}

/** The top-up cooldown (spec 4.6): `TOPUP_COOLDOWN` with the seconds left. */
export function topupCooldownRefusal(
  last: string | Date | null,
  settings: Pick<CoreSettings, 'topupCooldownSeconds'>,
  now: Date,
  { refused = false }: Decided = {},
): CardServiceError<'TOPUP_COOLDOWN'> | undefined {
  const seconds = cooldownSecondsLeft(last, settings.topupCooldownSeconds, now);
  if (!refused && seconds === 0) return undefined;
  return new CardServiceError('TOPUP_COOLDOWN', { seconds });
}

/** The withdrawal (and closure) cooldown (spec 4.7, 4.11): `WITHDRAW_COOLDOWN` with the seconds left and the configured minutes. */
export function withdrawCooldownRefusal(
  last: string | Date | null,
  settings: Pick<CoreSettings, 'withdrawCooldownSeconds'>,
  now: Date,
  { refused = false }: Decided = {},
): CardServiceError<'WITHDRAW_COOLDOWN'> | undefined {
  const seconds = cooldownSecondsLeft(last, settings.withdrawCooldownSeconds, now);
  if (!refused && seconds === 0) return undefined;
  return new CardServiceError('WITHDRAW_COOLDOWN', { seconds, minutes: withdrawCooldownMinutes(settings) });
}

/**
 * An amount within its bounds (spec 8: top-up and withdrawal minimum and maximum, whole cents): the
 * spec's validation refusal, as the edges' schema words it. In-range integers pass without parsing.
 */
export function amountBoundsRefusal(
  amount: Cents,
  bounds: { min: Cents; max: Cents; schema: ZodType },
): CardServiceError<'VALIDATION'> | undefined {
  if (Number.isSafeInteger(amount) && amount >= bounds.min && amount <= bounds.max) return undefined;
  const parsed = bounds.schema.safeParse({ amount: toAmount(amount) });
  return parsed.success ? undefined : validationError(parsed.error);
}

/** A top-up's card state (spec 4.6): a closed card, or one still being issued, takes none. */
export function topupStateRefusal(card: { status: string }): CardServiceError<'CARD_CLOSED' | 'CARD_PROCESSING'> | undefined {
  if (card.status === 'closed') return new CardServiceError('CARD_CLOSED');
  if (card.status === 'processing') return new CardServiceError('CARD_PROCESSING');
  return undefined;
}

/** A withdrawal's card state (spec 4.7): not from a closed card, nor one the provider has not issued yet. */
export function withdrawStateRefusal(card: {
  status: string;
  provider_ready: boolean | number;
}): CardServiceError<'CARD_CLOSED' | 'CARD_NOT_READY_WITHDRAW'> | undefined {
  if (card.status === 'closed') return new CardServiceError('CARD_CLOSED');
  if (!card.provider_ready) return new CardServiceError('CARD_NOT_READY_WITHDRAW');
  return undefined;
}

/** A closure's card state (spec 4.11): not a card closed already, nor one the provider has not issued yet. */
export function closeStateRefusal(card: {
  status: string;
  provider_ready: boolean | number;
}): CardServiceError<'ALREADY_CLOSED' | 'CARD_NOT_READY_CLOSE'> | undefined {
  if (card.status === 'closed') return new CardServiceError('ALREADY_CLOSED');
  if (!card.provider_ready) return new CardServiceError('CARD_NOT_READY_CLOSE');
  return undefined;
}

/**
 * A coupon redeemable now (card creation): found, active, not expired, with redemptions left; else `INVALID_COUPON`
 * with the reason. `refused`: a conditional redemption found none left.
 */
export function couponRefusal(
  coupon: { active: number | boolean; expires_at: string | null; max_redemptions: number | null; redemptions: number } | undefined,
  now: Date,
  { refused = false }: Decided = {},
): CardServiceError<'INVALID_COUPON'> | undefined {
  const invalid = (reason: string) => new CardServiceError('INVALID_COUPON', { reason });
  if (!coupon) return invalid('coupon not found');
  if (!coupon.active) return invalid('coupon is inactive');
  if (coupon.expires_at !== null && coupon.expires_at <= now.toISOString()) return invalid('coupon has expired');
  if (refused || (coupon.max_redemptions !== null && Number(coupon.redemptions) >= Number(coupon.max_redemptions))) {
    return invalid('coupon has no redemptions left');
  }
  return undefined;
}

/** The wallet covers a card's creation fee: `INSUFFICIENT_BALANCE` with the fee required. */
export function creationFeeRefusal(
  figures: { fee: Cents; available: Cents },
  { refused = false }: Decided = {},
): CardServiceError<'INSUFFICIENT_BALANCE'> | undefined {
  if (!refused && figures.fee <= figures.available) return undefined;
  return new CardServiceError('INSUFFICIENT_BALANCE', { required: figures.fee });
}
