import type { CardRow, Executor } from '../../db/schema.js';
import type { Cents } from '../ledger/money.js';
import { type CategoryGroup, isCategoryGroup } from './categories.js';

/** The cardholder's spending controls of a card; null is none. UTC days and months. */
export interface CardControls {
  perPurchaseLimit: Cents | null;
  dailyLimit: Cents | null;
  monthlyLimit: Cents | null;
  blockedCategories: CategoryGroup[];
}

/** A card's auto top-up (the interface's earlier `auto_topup`). */
export interface AutoTopup {
  enabled: boolean;
  minBalance: Cents;
  topupAmount: Cents;
  lastTriggered: string | null;
}

/** What a card has spent: approved purchases, held or cleared (the cleared amount once cleared). */
export interface Spending {
  today: Cents;
  thisMonth: Cents;
}

type ControlColumns = Pick<CardRow, 'per_purchase_limit' | 'daily_limit' | 'monthly_limit' | 'blocked_categories'>;
type AutoTopupColumns = Pick<CardRow, 'auto_topup_enabled' | 'auto_topup_min_balance' | 'auto_topup_amount' | 'auto_topup_last_triggered'>;

const centsOrNull = (value: number | string | null): Cents | null => (value === null ? null : Number(value));

export function controlsOf(card: ControlColumns): CardControls {
  const stored: unknown = JSON.parse(card.blocked_categories);
  const blocked = Array.isArray(stored)
    ? stored.filter((name): name is CategoryGroup => typeof name === 'string' && isCategoryGroup(name))
    : [];
  return {
    perPurchaseLimit: centsOrNull(card.per_purchase_limit),
    dailyLimit: centsOrNull(card.daily_limit),
    monthlyLimit: centsOrNull(card.monthly_limit),
    blockedCategories: blocked,
  };
}

export function autoTopupOf(card: AutoTopupColumns): AutoTopup {
  return {
    enabled: Number(card.auto_topup_enabled) === 1,
    minBalance: Number(card.auto_topup_min_balance),
    topupAmount: Number(card.auto_topup_amount),
    lastTriggered: card.auto_topup_last_triggered,
  };
}

/** The start of `now`'s UTC day and month, as stored timestamps compare. */
export function spendingWindows(now: Date): { dayStart: string; monthStart: string } {
  const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  return { dayStart: day.toISOString(), monthStart: month.toISOString() };
}

/** The sums of spending over the authorizations of `now`'s UTC month, approved and held or cleared. */
function spendingSums(ex: Executor, now: Date) {
  const { dayStart, monthStart } = spendingWindows(now);
  return ex
    .selectFrom('card_authorizations')
    .select((eb) => [
      eb.fn
        .sum<number | string | null>(
          eb.case().when('created_at', '>=', dayStart).then(eb.fn.coalesce('cleared_amount', 'amount')).else(0).end(),
        )
        .as('today'),
      eb.fn.sum<number | string | null>(eb.fn.coalesce('cleared_amount', 'amount')).as('month'),
    ])
    .where('created_at', '>=', monthStart)
    .where('status', 'in', ['pending', 'cleared']);
}

const spendingFrom = (row: { today: number | string | null; month: number | string | null } | undefined): Spending => ({
  today: Number(row?.today ?? 0),
  thisMonth: Number(row?.month ?? 0),
});

/** What the card has spent today and this month (UTC), one query over its authorizations of this month. */
export async function spendingOf(ex: Executor, cardId: string, now: Date): Promise<Spending> {
  return spendingFrom(await spendingSums(ex, now).where('card_id', '=', cardId).executeTakeFirst());
}

/** What each card of `cardIds` has spent today and this month (UTC), in one query; a card with no purchases is absent. */
export async function spendingOfCards(ex: Executor, cardIds: string[], now: Date): Promise<Map<string, Spending>> {
  if (cardIds.length === 0) return new Map();
  const rows = await spendingSums(ex, now).select('card_id').where('card_id', 'in', cardIds).groupBy('card_id').execute();
  return new Map(rows.map((row) => [row.card_id, spendingFrom(row)]));
}
