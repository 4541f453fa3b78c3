import { InlineKeyboard } from 'grammy';
import { CATEGORY_GROUP_NAMES, type CategoryGroup, type LimitControl } from '../card-service/from-core.js';
import type { Card, Cents } from '../card-service/port.js';
import type { ControlsView as CardControls } from './controls-access.js';
import { encodeControls } from './controls-callbacks.js';
import { encodeCallback } from './callback-data.js';
import { localMoney, type T } from './format.js';
import type { Screen } from './screens.js';

/**
 * The "Limits" screens of a card (embedded mode): each limit as a button opening its presets, the
 * categories as toggles. From the card's view a preset is three taps (Limits, the limit, the preset), a
 * category two.
 */

/** The limits offered as buttons, cents; "Off" removes the limit. */
export const LIMIT_PRESETS: readonly Cents[] = [5_000, 10_000, 25_000, 50_000, 100_000];

export const LIMIT_CONTROLS: readonly LimitControl[] = ['per_purchase_limit', 'daily_limit', 'monthly_limit'];

const FIELD: Record<LimitControl, 'perPurchaseLimit' | 'dailyLimit' | 'monthlyLimit'> = {
  per_purchase_limit: 'perPurchaseLimit',
  daily_limit: 'dailyLimit',
  monthly_limit: 'monthlyLimit',
};

/** A limit of the controls as read (null: none). */
export const limitOf = (controls: CardControls, control: LimitControl): Cents | null => controls[FIELD[control]];

/** The input that sets one limit. */
export const limitInput = (control: LimitControl, to: Cents | null) => ({ [FIELD[control]]: to });

const limitText = (t: T, cents: Cents | null) => (cents === null ? t('limit-none') : localMoney(cents));
export const limitName = (t: T, control: LimitControl) => t('limit-name', { control });
export const categoryName = (t: T, category: CategoryGroup) => t('category-name', { category });

export function limitsScreen(t: T, card: Card, controls: CardControls): Screen {
  const blocked = controls.blockedCategories;
  const text = t('limits-title', {
    name: card.name,
    masked: card.maskedPan,
    perPurchase: limitText(t, controls.perPurchaseLimit),
    daily: limitText(t, controls.dailyLimit),
    monthly: limitText(t, controls.monthlyLimit),
    spentToday: localMoney(controls.spentToday),
    spentMonth: localMoney(controls.spentThisMonth),
    blocked: blocked.length === 0 ? t('limits-blocked-none') : blocked.map((c) => categoryName(t, c)).join(', '),
  });
  const kb = new InlineKeyboard();
  for (const control of LIMIT_CONTROLS) {
    const label = t('btn-limit', { name: limitName(t, control), value: limitText(t, limitOf(controls, control)) });
    kb.text(label, encodeControls({ kind: 'limit-presets', cardId: card.id, control })).row();
  }
  CATEGORY_GROUP_NAMES.forEach((category, i) => {
    const key = blocked.includes(category) ? 'btn-category-blocked' : 'btn-category-allowed';
    kb.text(t(key, { name: categoryName(t, category) }), encodeControls({ kind: 'category', cardId: card.id, category }));
    if (i % 2 === 1) kb.row();
  });
  kb.row().text(t('btn-back-card'), encodeCallback({ kind: 'card', action: 'view', cardId: card.id }));
  return { text, keyboard: kb };
}

export function limitPresetsScreen(t: T, card: Card, control: LimitControl, current: Cents | null): Screen {
  const name = limitName(t, control);
  const text = t('limit-pick', { name, card: card.name, value: limitText(t, current) });
  const kb = new InlineKeyboard();
  const mark = (label: string, chosen: boolean) => (chosen ? `• ${label} •` : label);
  LIMIT_PRESETS.forEach((preset, i) => {
    const label = mark(t('btn-amount', { amount: localMoney(preset) }), preset === current);
    kb.text(label, encodeControls({ kind: 'limit-set', cardId: card.id, control, to: preset }));
    if (i % 3 === 2) kb.row();
  });
  kb.text(mark(t('btn-limit-off'), current === null), encodeControls({ kind: 'limit-set', cardId: card.id, control, to: null }));
  kb.row().text(t('btn-back'), encodeControls({ kind: 'limits', cardId: card.id }));
  return { text, keyboard: kb };
}
