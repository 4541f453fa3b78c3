import type { CardType } from '../../db/schema.js';
import type { Cents } from '../ledger/money.js';
import { categoryOf } from './categories.js';
import type { CardControls, Spending } from './controls.js';
import type { DeclineCode, DeclineFix } from './declines.js';

/**
 * The authorization's rules, pure: given what the transaction read, the decline (a code and its fix) or
 * null. Checked in the order: the card's state, its type, the cardholder's controls, then funds
 * (`fundsDecline`, asked last, after any auto top-up). The model test (test/core/authorization-model.test.ts)
 * predicts every decision from the same order.
 */

export interface Decline {
  code: DeclineCode;
  fix: DeclineFix | null;
}

export interface Merchant {
  name: string;
  /** ISO 18245 merchant category code, four digits. */
  mcc: string;
  /** ISO 3166 alpha-2. */
  country: string;
}

/** What the rules before funds read of the card. */
export interface CardForDecision {
  status: 'processing' | 'active' | 'frozen' | 'closed';
  type: CardType;
  lockedMerchant: string | null;
  controls: CardControls;
}

/** A merchant-locked card's merchant is matched by name, trimmed and without regard to case. */
export function sameMerchant(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}

/**
 * Every rule but funds. `alreadyUsed`: a single-use card has an approved authorization (held or cleared).
 * `spending` is read only when a daily or monthly limit is set (null otherwise).
 */
export function declineBeforeFunds(
  card: CardForDecision,
  purchase: { amount: Cents; merchant: Merchant },
  usage: { alreadyUsed: boolean; spending: Spending | null },
): Decline | null {
  if (card.status === 'frozen') return { code: 'card_frozen', fix: { kind: 'unfreeze' } };
  if (card.status === 'closed') {
    // A single-use card closed once used: the way on is a new card like it.
    const used = card.type === 'single_use' && usage.alreadyUsed;
    return { code: 'card_closed', fix: used ? { kind: 'new_card_like' } : null };
  }
  if (card.status === 'processing') return { code: 'card_processing', fix: null };

  if (card.type === 'single_use' && usage.alreadyUsed) return { code: 'single_use_used', fix: { kind: 'new_card_like' } };
  if (card.type === 'merchant_locked' && card.lockedMerchant !== null && !sameMerchant(card.lockedMerchant, purchase.merchant.name)) {
    return { code: 'merchant_locked', fix: { kind: 'locked_to', merchant: card.lockedMerchant } };
  }

  const { amount } = purchase;
  const { perPurchaseLimit, dailyLimit, monthlyLimit, blockedCategories } = card.controls;
  if (perPurchaseLimit !== null && amount > perPurchaseLimit) {
    return { code: 'per_purchase_limit', fix: { kind: 'raise_limit', control: 'per_purchase_limit', to: amount } };
  }
  const spent = usage.spending ?? { today: 0, thisMonth: 0 };
  if (dailyLimit !== null && spent.today + amount > dailyLimit) {
    return { code: 'daily_limit', fix: { kind: 'raise_limit', control: 'daily_limit', to: spent.today + amount } };
  }
  if (monthlyLimit !== null && spent.thisMonth + amount > monthlyLimit) {
    return { code: 'monthly_limit', fix: { kind: 'raise_limit', control: 'monthly_limit', to: spent.thisMonth + amount } };
  }
  const category = categoryOf(purchase.merchant.mcc);
  if (category !== null && blockedCategories.includes(category)) {
    return { code: 'blocked_category', fix: { kind: 'allow_category', category } };
  }
  return null;
}

/** Whether the rules before funds need the card's spending this UTC day and month. */
export function needsSpending(controls: CardControls): boolean {
  return controls.dailyLimit !== null || controls.monthlyLimit !== null;
}

/** Funds, asked last: the shortfall's top-up (at least the minimum top-up) is the fix. */
export function fundsDecline(amount: Cents, available: Cents, topupMin: Cents): Decline | null {
  if (amount <= available) return null;
  return { code: 'insufficient_funds', fix: { kind: 'topup', amount: Math.max(amount - available, topupMin) } };
}
