import { InlineKeyboard } from 'grammy';
import type { Card, Cents } from '../card-service/port.js';
import type { AutoTopupSettings } from './controls-access.js';
import { encodeCallback } from './callback-data.js';
import { encodeControls, type AutoTopupField } from './controls-callbacks.js';
import { localMoney, type T } from './format.js';
import type { Screen } from './screens.js';

/**
 * The "Auto top-up" screens of a card (embedded mode): on or off in two taps from the card's view, the
 * balance it keeps and the amount it adds in three (the field, then a preset).
 */

/** The presets of each field, cents; amounts outside the service's top-up range are left out. */
export const AUTO_TOPUP_PRESETS: Record<AutoTopupField, readonly Cents[]> = {
  minBalance: [1_000, 2_500, 5_000, 10_000],
  topupAmount: [2_500, 5_000, 10_000, 25_000],
};

/** What turning it on with nothing chosen yet sets: a $10 floor and $50 each time (at least the minimum top-up). */
export function withDefaults(settings: AutoTopupSettings, topupMin: Cents): AutoTopupSettings {
  return {
    enabled: settings.enabled,
    minBalance: settings.minBalance > 0 ? settings.minBalance : 1_000,
    topupAmount: settings.topupAmount > 0 ? settings.topupAmount : Math.max(5_000, topupMin),
  };
}

export function autoTopupScreen(t: T, card: Card, settings: AutoTopupSettings): Screen {
  const text = t('auto-topup-title', {
    name: card.name,
    masked: card.maskedPan,
    state: t('auto-topup-state', { enabled: settings.enabled ? 'yes' : 'no' }),
    min: localMoney(settings.minBalance),
    amount: localMoney(settings.topupAmount),
  });
  const cardId = card.id;
  const kb = new InlineKeyboard()
    .text(
      t(settings.enabled ? 'btn-auto-topup-off' : 'btn-auto-topup-on'),
      encodeControls({ kind: 'auto-topup-switch', cardId, enabled: !settings.enabled }),
    )
    .row()
    .text(
      t('btn-auto-topup-min', { amount: localMoney(settings.minBalance) }),
      encodeControls({ kind: 'auto-topup-presets', cardId, field: 'minBalance' }),
    )
    .text(
      t('btn-auto-topup-amount', { amount: localMoney(settings.topupAmount) }),
      encodeControls({ kind: 'auto-topup-presets', cardId, field: 'topupAmount' }),
    )
    .row()
    .text(t('btn-back-card'), encodeCallback({ kind: 'card', action: 'view', cardId }));
  return { text, keyboard: kb };
}

export function autoTopupPresetsScreen(
  t: T,
  card: Card,
  field: AutoTopupField,
  current: Cents,
  offered: (amount: Cents) => boolean,
): Screen {
  const text = t(field === 'minBalance' ? 'auto-topup-pick-min' : 'auto-topup-pick-amount', {
    name: card.name,
    value: localMoney(current),
  });
  const kb = new InlineKeyboard();
  for (const preset of AUTO_TOPUP_PRESETS[field].filter(offered)) {
    const label = t('btn-amount', { amount: localMoney(preset) });
    kb.text(preset === current ? `• ${label} •` : label, encodeControls({ kind: 'auto-topup-set', cardId: card.id, field, to: preset }));
  }
  kb.row().text(t('btn-back'), encodeControls({ kind: 'auto-topup', cardId: card.id }));
  return { text, keyboard: kb };
}
