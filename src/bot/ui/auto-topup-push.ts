import { InlineKeyboard } from 'grammy';
import type { AutoTopupEvent } from '../card-service/from-core.js';
import { encodeCallback } from './callback-data.js';
import { ADD_MONEY_BUTTON } from './deposit-texts.js';
import { localMoney, type T } from './format.js';
import type { Screen } from './screens.js';

/**
 * The chat's word on an auto top-up: what it added and the balance then, or why it could not run with the
 * button that fixes it: a wallet short, "Add money" (the main menu's screen); a card at its plan's limit,
 * the card (to withdraw from it). One that ran a moment ago only waits: no button.
 */
export function autoTopupPush(t: T, event: AutoTopupEvent): Screen {
  const params = {
    amount: localMoney(event.amount),
    name: event.cardName,
    masked: event.maskedPan,
    balance: localMoney(event.cardBalance),
    wallet: localMoney(event.walletBalance),
  };
  if (event.outcome === 'done') return { text: t('auto-topup-done', params) };
  const text = t('auto-topup-failed', { ...params, reason: event.reason ?? 'other' });
  if (event.reason === 'wallet_short') return { text, keyboard: new InlineKeyboard().text(t('menu-add-money'), ADD_MONEY_BUTTON) };
  if (event.reason === 'plan_limit') {
    const open = encodeCallback({ kind: 'card', action: 'alertview', cardId: event.cardId });
    return { text, keyboard: new InlineKeyboard().text(t('btn-open-card'), open) };
  }
  return { text };
}
