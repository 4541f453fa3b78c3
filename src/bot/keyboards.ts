import { InlineKeyboard } from 'grammy';
import type { Card } from '../core/views.js';
import { encodeCallback, conversationButton, type CardAction } from './callback-data.js';

type T = (key: string) => string;

/**
 * The buttons under a card: only the freeze or unfreeze that applies; none that move money on a closed card.
 * Given `detailsUrl` (the Mini App with a one-time nonce), Details opens it; otherwise it is a plain button.
 */
export function cardKeyboard(t: T, card: Card, detailsUrl?: string): InlineKeyboard {
  const cb = (action: Parameters<typeof encodeCallback>[0] & { kind: 'card' }) => encodeCallback(action);
  const id = card.id;
  const kb = new InlineKeyboard();
  if (card.status !== 'closed') {
    kb.text(t('btn-topup'), cb({ kind: 'card', action: 'topup', cardId: id }))
      .text(t('btn-withdraw'), cb({ kind: 'card', action: 'withdraw', cardId: id }))
      .row();
    if (card.status === 'active') kb.text(t('btn-freeze'), cb({ kind: 'card', action: 'freeze', cardId: id }));
    if (card.status === 'frozen') kb.text(t('btn-unfreeze'), cb({ kind: 'card', action: 'unfreeze', cardId: id }));
    if (detailsUrl) kb.webApp(t('btn-details'), detailsUrl).row();
    else kb.text(t('btn-details'), cb({ kind: 'card', action: 'details', cardId: id })).row();
  }
  kb.text(t('btn-otps'), cb({ kind: 'card', action: 'otps', cardId: id }))
    .text(t('btn-transactions'), encodeCallback({ kind: 'tx', page: 1, cardId: id }))
    .row();
  if (card.status !== 'closed') kb.text(t('btn-close'), cb({ kind: 'card', action: 'close', cardId: id }));
  kb.text(t('btn-back'), encodeCallback({ kind: 'cards' }));
  return kb;
}

/** What a card list's buttons do: open the card, its OTPs, or a command's action on the picked card. */
export type ListAction = Extract<CardAction, 'view' | 'otps' | 'topup' | 'freeze' | 'details'>;

export function cardListKeyboard(cards: Card[], label: (card: Card) => string, action: ListAction = 'view'): InlineKeyboard {
  const kb = new InlineKeyboard();
  for (const card of cards) kb.text(label(card), encodeCallback({ kind: 'card', action, cardId: card.id })).row();
  return kb;
}

export function pagerKeyboard(t: T, page: number, hasPrev: boolean, hasNext: boolean, cardId?: string): InlineKeyboard {
  const kb = new InlineKeyboard();
  if (hasPrev) kb.text(t('btn-prev'), encodeCallback({ kind: 'tx', page: page - 1, cardId }));
  if (hasNext) kb.text(t('btn-next'), encodeCallback({ kind: 'tx', page: page + 1, cardId }));
  if (cardId) {
    kb.row()
      .text(t('btn-back-card'), encodeCallback({ kind: 'card', action: 'view', cardId }))
      .text(t('btn-all-cards'), encodeCallback({ kind: 'tx', page: 1 }));
  }
  return kb;
}

/** One button that opens the card's details in the Mini App (`detailsUrl` carries a one-time nonce). */
export function webAppDetailsKeyboard(t: T, detailsUrl: string): InlineKeyboard {
  return new InlineKeyboard().webApp(t('btn-details-open'), detailsUrl);
}

export function otpKeyboard(t: T, cardId: string): InlineKeyboard {
  return new InlineKeyboard().text(t('btn-request-otp'), encodeCallback({ kind: 'card', action: 'reqotp', cardId }));
}

/** A pushed transaction alert: plain keyboard (menus cannot be sent through `bot.api`). */
export function alertKeyboard(t: T, cardId: string): InlineKeyboard {
  return new InlineKeyboard().text(t('btn-freeze'), encodeCallback({ kind: 'card', action: 'alertfreeze', cardId }));
}

export function confirmKeyboard(t: T, nonce: string): InlineKeyboard {
  return new InlineKeyboard()
    .text(t('btn-confirm'), conversationButton(nonce, 'ok'))
    .text(t('btn-cancel'), conversationButton(nonce, 'no'));
}

export function choiceKeyboard(nonce: string, choices: { label: string; value: string }[]): InlineKeyboard {
  const kb = new InlineKeyboard();
  for (const choice of choices) kb.text(choice.label, conversationButton(nonce, choice.value)).row();
  return kb;
}
