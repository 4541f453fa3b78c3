import { z } from 'zod';
import type { CardType } from '../../db/schema.js';
import { CATEGORY_GROUP_NAMES, type CategoryGroup } from '../authorization/categories.js';
import { AT_MOST_TWO_DECIMALS, formatAmount, hasAtMostTwoDecimals, toAmount, toCents, type Cents } from '../ledger/money.js';
import type { CoreSettings } from '../settings.js';

/** A card's types, chosen at creation (`POST /cards`'s `type`). */
export const CARD_TYPES = ['multi_use', 'single_use', 'merchant_locked'] as const satisfies readonly CardType[];

/** The largest amount a spending limit or an auto top-up's minimum balance may be: $1,000,000.00, above any plan. */
export const CONTROL_AMOUNT_MAX: Cents = 100_000_000;

/** The spending controls a cardholder sets; a field left out stays as it is, null is none. */
export interface ControlsInput {
  perPurchaseLimit?: Cents | null;
  dailyLimit?: Cents | null;
  monthlyLimit?: Cents | null;
  blockedCategories?: CategoryGroup[];
}

/** An auto top-up's settings; an amount left out stays as it is. */
export interface AutoTopupInput {
  enabled: boolean;
  minBalance?: Cents;
  topupAmount?: Cents;
}

const ALLOWED_CATEGORIES = `Allowed: ${CATEGORY_GROUP_NAMES.join(', ')}`;

/** An amount in the interface's money rules (a number, at most 2 decimals), named in its refusals, giving cents. */
function money(name: string, bounds: { min: Cents; max: Cents; minText: string; maxText: string }) {
  return (
    z
      .number({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be a number`) })
      .min(toAmount(bounds.min), { error: bounds.minText })
      .max(toAmount(bounds.max), { error: bounds.maxText })
      // Not `multipleOf: 0.01`, as for the top-up's amount (schemas.ts).
      .refine(hasAtMostTwoDecimals, { error: `${name} must have ${AT_MOST_TWO_DECIMALS}` })
      .meta({ description: `USD, ${AT_MOST_TWO_DECIMALS} (a third decimal is refused however small)` })
      .transform((value) => toCents(value) as Cents)
  );
}

const limit = (name: string) =>
  money(name, {
    min: 1,
    max: CONTROL_AMOUNT_MAX,
    minText: `${name} must be positive`,
    maxText: `${name} must be at most ${formatAmount(CONTROL_AMOUNT_MAX)}`,
  })
    .nullable()
    .optional()
    .describe(`${name}, USD; null for none; left out, unchanged`);

/**
 * The bodies of `PUT /cards/{id}/controls` and `PUT /cards/{id}/auto-topup` (our extension), in the wire's
 * names, giving the core's inputs (cents, camelCase). The core re-checks what it is given with them.
 */
export function controlSchemas(settings: CoreSettings) {
  const controls = z
    .strictObject({
      per_purchase_limit: limit('Per-purchase limit'),
      daily_limit: limit('Daily limit'),
      monthly_limit: limit('Monthly limit'),
      blocked_categories: z
        .array(z.enum(CATEGORY_GROUP_NAMES, { error: (issue) => `Unknown category: ${String(issue.input)}. ${ALLOWED_CATEGORIES}` }), {
          error: `Blocked categories must be a list of category names. ${ALLOWED_CATEGORIES}`,
        })
        .max(CATEGORY_GROUP_NAMES.length * 2, { error: `Blocked categories name at most ${CATEGORY_GROUP_NAMES.length * 2} entries` })
        .nullable()
        .optional()
        .describe(`The merchant-category groups refused, of: ${CATEGORY_GROUP_NAMES.join(', ')}; null or [] for none; left out, unchanged`),
    })
    .transform(
      (body): ControlsInput =>
        definedOnly({
          perPurchaseLimit: body.per_purchase_limit,
          dailyLimit: body.daily_limit,
          monthlyLimit: body.monthly_limit,
          blockedCategories: body.blocked_categories === null ? [] : body.blocked_categories,
        }),
    );

  const autoTopup = z
    .strictObject({
      enabled: z
        .boolean({ error: (issue) => (issue.input === undefined ? 'enabled is required' : 'enabled must be true or false') })
        .describe('whether the card is topped up from the wallet when it runs low'),
      min_balance: money('Minimum balance', {
        min: 0,
        max: CONTROL_AMOUNT_MAX,
        minText: 'Minimum balance must not be negative',
        maxText: `Minimum balance must be at most ${formatAmount(CONTROL_AMOUNT_MAX)}`,
      })
        .optional()
        .describe("a top-up runs once a clearing leaves the balance below it (at most the card's plan limit); left out, unchanged"),
      topup_amount: money('Top-up amount', {
        min: settings.topupMin,
        max: settings.topupMax,
        minText: `Minimum top-up amount is ${toAmount(settings.topupMin)}`,
        maxText: `Maximum top-up amount is ${toAmount(settings.topupMax)}`,
      })
        .optional()
        .describe("what each auto top-up adds (a top-up's bounds, and at most the card's plan limit); left out, unchanged"),
    })
    .transform(
      (body): AutoTopupInput => definedOnly({ enabled: body.enabled, minBalance: body.min_balance, topupAmount: body.topup_amount }),
    );

  return { controls, autoTopup };
}

/** The fields that are given: left out is unchanged. */
function definedOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
