import { InlineKeyboard } from 'grammy';
import type { Card } from '../card-service/port.js';
import { encodeCallback, conversationButton, MAIN_MENU_BUTTON, type CardAction } from './callback-data.js';
import { encodeControls } from './controls-callbacks.js';

type T = (key: string) => string;

/**
 * Whether a card's view, drawn from the card as it is now, offers `action`: only the freeze or unfreeze
 * that applies; nothing that moves money, shows details or waits for a code on a closed card; only
 * looking at a card being issued. A press on a button the view would no longer offer comes from an older
 * view (the card changed meanwhile): the view is redrawn instead of believed.
 */
export function cardOffers(card: Pick<Card, 'status'>, action: CardAction, options: { watch?: boolean } = {}): boolean {
  switch (action) {
    case 'topup':
    case 'withdraw':
    case 'details':
    case 'close':
      return card.status === 'active' || card.status === 'frozen';
    case 'freeze':
    case 'alertfreeze':
    case 'watch':
      return card.status === 'active' && (action !== 'watch' || options.watch === true);
    case 'unfreeze':
      return card.status === 'frozen';
    case 'otps':
    case 'reqotp':
      return card.status !== 'processing';
    case 'view':
    case 'alertview':
      return true;
  }
}

/**
 * A card's buttons, those `cardOffers` gives for its state. Given `detailsUrl` (the Mini App with a
 * one-time nonce), Details opens it; otherwise it is a plain button. `watch`: the service's OTPs are found
 * by polling (remote mode), so the card offers "waiting for a code", which has it watched closely for a
 * few minutes. `controls`: the service has spending controls and auto top-up (ours), offered on an open card.
 */
export function cardKeyboard(t: T, card: Card, detailsUrl?: string, options: { watch?: boolean; controls?: boolean } = {}): InlineKeyboard {
  const id = card.id;
  const offers = (action: CardAction) => cardOffers(card, action, options);
  const cb = (action: CardAction) => encodeCallback({ kind: 'card', action, cardId: id });
  const kb = new InlineKeyboard();
  // A card being issued: nothing to do with it yet but look (its statement, its card again later).
  if (card.status === 'processing') {
    return kb
      .text(t('btn-transactions'), encodeCallback({ kind: 'tx', page: 1, cardId: id }))
      .text(t('btn-back'), encodeCallback({ kind: 'cards' }));
  }
  if (offers('topup')) kb.text(t('btn-topup'), cb('topup')).text(t('btn-withdraw'), cb('withdraw')).row();
  if (offers('freeze')) kb.text(t('btn-freeze'), cb('freeze'));
  if (offers('unfreeze')) kb.text(t('btn-unfreeze'), cb('unfreeze'));
  if (offers('details')) {
    if (detailsUrl) kb.webApp(t('btn-details'), detailsUrl).row();
    else kb.text(t('btn-details'), cb('details')).row();
  }
  kb.text(t('btn-otps'), cb('otps'))
    .text(t('btn-transactions'), encodeCallback({ kind: 'tx', page: 1, cardId: id }))
    .row();
  if (offers('watch')) kb.text(t('btn-watch'), cb('watch')).row();
  // Spending controls and auto top-up: the service's own (embedded mode), on a card still open.
  if (options.controls && offers('topup')) {
    kb.text(t('btn-limits'), encodeControls({ kind: 'limits', cardId: id }))
      .text(t('btn-auto-topup'), encodeControls({ kind: 'auto-topup', cardId: id }))
      .row();
  }
  if (offers('close')) kb.text(t('btn-close'), cb('close'));
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

/**
 * A pushed transaction alert: plain keyboard (menus cannot be sent through `bot.api`). Freeze only where
 * the alert leaves the card able to be frozen: a decline for a frozen or closed card, or the card's
 * closure, opens the card instead.
 */
export function alertKeyboard(t: T, cardId: string, alert: { declineCode?: string | null; type?: string } = {}): InlineKeyboard {
  const unfreezable = alert.declineCode === 'card_frozen' || alert.declineCode === 'card_closed' || alert.type === 'card_close';
  if (unfreezable) return new InlineKeyboard().text(t('btn-open-card'), encodeCallback({ kind: 'card', action: 'alertview', cardId }));
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
