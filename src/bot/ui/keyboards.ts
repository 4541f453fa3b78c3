import { InlineKeyboard } from 'grammy';
import type { Card } from '../card-service/port.js';
import { encodeCallback, conversationButton, MAIN_MENU_BUTTON, type CardAction } from './callback-data.js';

type T = (key: string) => string;

/**
 * The buttons under a card: only the freeze or unfreeze that applies; none that move money on a closed card.
 * Given `detailsUrl` (the Mini App with a one-time nonce), Details opens it; otherwise it is a plain button.
 */
/**
 * A card's buttons. `watch`: the service's OTPs are found by polling (remote mode), so the card offers
 * "waiting for a code", which has it watched closely for a few minutes.
 */
export function cardKeyboard(t: T, card: Card, detailsUrl?: string, options: { watch?: boolean } = {}): InlineKeyboard {
  const cb = (action: Parameters<typeof encodeCallback>[0] & { kind: 'card' }) => encodeCallback(action);
  const id = card.id;
  const kb = new InlineKeyboard();
  // A card being issued: nothing to do with it yet but look (its statement, its card again later).
  if (card.status === 'processing') {
    return kb
      .text(t('btn-transactions'), encodeCallback({ kind: 'tx', page: 1, cardId: id }))
      .text(t('btn-back'), encodeCallback({ kind: 'cards' }));
  }
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
  if (options.watch && card.status === 'active') kb.text(t('btn-watch'), cb({ kind: 'card', action: 'watch', cardId: id })).row();
  if (card.status !== 'closed') kb.text(t('btn-close'), cb({ kind: 'card', action: 'close', cardId: id }));
  kb.text(t('btn-back'), encodeCallback({ kind: 'cards' }));
  return kb;
}

/** What a card list's buttons do: open the card, its OTPs, or a command's action on the picked card. */
export type ListAction = Extract<CardAction, 'view' | 'otps' | 'topup' | 'freeze' | 'details'>;

/** A card list, with the way back to the main menu: the list is drawn in the menu's message. */
export function cardListKeyboard(t: T, cards: Card[], label: (card: Card) => string, action: ListAction = 'view'): InlineKeyboard {
  const kb = new InlineKeyboard();
  for (const card of cards) kb.text(label(card), encodeCallback({ kind: 'card', action, cardId: card.id })).row();
  return withMenuButton(t, kb);
}

/**
 * A last row with the button that draws the main menu again in the same message: screens reached from
 * the menu replace it, so each offers the way back.
 */
export function withMenuButton(t: T, kb = new InlineKeyboard()): InlineKeyboard {
  if ((kb.inline_keyboard.at(-1)?.length ?? 0) > 0) kb.row();
  return kb.text(t('btn-menu'), MAIN_MENU_BUTTON);
}

/** Transaction pages: a card's lead back to the card (and to every card's); every card's back to the menu. */
export function pagerKeyboard(t: T, page: number, hasPrev: boolean, hasNext: boolean, cardId?: string): InlineKeyboard {
  const kb = new InlineKeyboard();
  if (hasPrev) kb.text(t('btn-prev'), encodeCallback({ kind: 'tx', page: page - 1, cardId }));
  if (hasNext) kb.text(t('btn-next'), encodeCallback({ kind: 'tx', page: page + 1, cardId }));
  if (!cardId) return withMenuButton(t, kb);
  return kb
    .row()
    .text(t('btn-back-card'), encodeCallback({ kind: 'card', action: 'view', cardId }))
    .text(t('btn-all-cards'), encodeCallback({ kind: 'tx', page: 1 }));
}

/** One button that opens the card's details in the Mini App (`detailsUrl` carries a one-time nonce). */
export function webAppDetailsKeyboard(t: T, detailsUrl: string): InlineKeyboard {
  return new InlineKeyboard().webApp(t('btn-details-open'), detailsUrl);
}

/**
 * Under a card's OTP list: the e-mail request (a service that has it), "waiting for a code" (remote mode);
 * `back` adds the way back to the card, for a list drawn in the card's own message.
 */
export function otpKeyboard(t: T, cardId: string, offer: { email: boolean; watch: boolean; back?: boolean }): InlineKeyboard | undefined {
  if (!offer.email && !offer.watch && !offer.back) return undefined;
  const kb = new InlineKeyboard();
  if (offer.email) kb.text(t('btn-request-otp'), encodeCallback({ kind: 'card', action: 'reqotp', cardId }));
  if (offer.watch) kb.text(t('btn-watch'), encodeCallback({ kind: 'card', action: 'watch', cardId }));
  if (offer.back && (offer.email || offer.watch)) kb.row();
  if (offer.back) kb.text(t('btn-back-card'), encodeCallback({ kind: 'card', action: 'view', cardId }));
  return kb;
}

/** A pushed transaction alert: plain keyboard (menus cannot be sent through `bot.api`). */
export function alertKeyboard(t: T, cardId: string, options: { frozen?: boolean } = {}): InlineKeyboard {
  // A card declined for being frozen has nothing to freeze: the alert opens the card instead.
  if (options.frozen) return new InlineKeyboard().text(t('btn-open-card'), encodeCallback({ kind: 'card', action: 'alertview', cardId }));
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
