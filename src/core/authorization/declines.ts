import type { CategoryGroup } from './categories.js';

/**
 * Why an authorization was declined: one code, in the statement line's `decline_code`, the API and the
 * chat's alert. Checked in this order (src/core/authorization/): the card's state, its type, the
 * cardholder's controls, its funds.
 */
export const DECLINE_CODES = [
  'card_frozen',
  'card_closed',
  'card_processing',
  'single_use_used',
  'merchant_locked',
  'per_purchase_limit',
  'daily_limit',
  'monthly_limit',
  'blocked_category',
  'insufficient_funds',
  'challenge_declined',
] as const;

export type DeclineCode = (typeof DECLINE_CODES)[number];

export type LimitControl = 'per_purchase_limit' | 'daily_limit' | 'monthly_limit';

/**
 * What fixes a decline, for the cardholder's one-tap button (each behind the usual quote and Confirm).
 * Null where nothing the cardholder can do helps, or where saying more would help a fraudster.
 */
export type DeclineFix =
  /** Not enough money: top up the shortfall (cents), at least the minimum top-up. */
  | { kind: 'topup'; amount: number }
  | { kind: 'unfreeze' }
  /** Over a limit: raise it to `to` cents (what this purchase needed). */
  | { kind: 'raise_limit'; control: LimitControl; to: number }
  | { kind: 'allow_category'; category: CategoryGroup }
  /** A single-use card already used: a new card of the same BIN, plan and type. */
  | { kind: 'new_card_like' }
  /** A merchant-locked card at another merchant: no button, the merchant it is locked to named. */
  | { kind: 'locked_to'; merchant: string };
