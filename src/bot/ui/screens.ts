import { type Context, GrammyError } from 'grammy';
import type { InlineKeyboardMarkup } from 'grammy/types';
import type { Card, CardAccount } from '../card-service/port.js';
import type { BotContext } from '../context.js';
import { cardView, localMoney, transactionLine } from './format.js';
import { cardKeyboard, cardListKeyboard, pagerKeyboard, withMenuButton, type ListAction } from './keyboards.js';
import { lastCardKey } from '../store/kv-keys.js';
import { readKv } from '../store/kv.js';
import { attempt, type Services } from '../services.js';
import { issueWebAppNonce, webAppButtonUrl } from '../webapp-nonces.js';

/** Screens shown from several places (menu, commands, buttons): each reads the card service and renders. */

export interface Screen {
  text: string;
  keyboard?: InlineKeyboardMarkup;
}

export function accountOf(ctx: BotContext): CardAccount {
  if (!ctx.account) throw new Error('A linked chat was expected here');
  return ctx.account;
}

export async function walletScreen(ctx: BotContext): Promise<Screen> {
  const account = accountOf(ctx);
  const wallet = await account.walletBalance();
  const text = ctx.t('wallet-balance', { balance: localMoney(wallet.balance) });
  // Creation fees held for cards being issued: out of the balance, not yet spent.
  const held = (await account.walletHeld?.()) ?? 0;
  const keyboard = withMenuButton(ctx.t);
  return { text: held > 0 ? `${text}\n${ctx.t('wallet-held', { held: localMoney(held) })}` : text, keyboard };
}

/**
 * The account's cards. A service that cannot list them (listing is an extension of the interface) gives
 * the card this chat last used, when it still opens: the user reaches that one at least.
 */
export async function knownCards(ctx: BotContext, s: Services): Promise<Card[]> {
  const account = accountOf(ctx);
  const listed = await account.listCards();
  if (listed !== undefined) return listed;
  const last = ctx.chat ? await readKv(s.db, lastCardKey(ctx.chat.id)) : undefined;
  if (last === undefined) return [];
  const outcome = await attempt(() => account.getCard(last));
  return 'ok' in outcome ? [outcome.ok] : [];
}

/** The account's cards as buttons for `action`; a command's pick (topup, freeze, details) lists open, issued cards only. */
export async function cardListScreen(ctx: BotContext, s: Services, action: ListAction = 'view'): Promise<Screen> {
  const all = await knownCards(ctx, s);
  const listed = action === 'view' || action === 'otps' ? all : all.filter((c) => c.status !== 'closed' && c.status !== 'processing');
  // The card the chat last used first: with several cards, the usual one is the first button.
  const last = ctx.chat ? await readKv(s.db, lastCardKey(ctx.chat.id)) : undefined;
  const cards = [...listed.filter((c) => c.id === last), ...listed.filter((c) => c.id !== last)];
  if (cards.length === 0) return { text: ctx.t('cards-none'), keyboard: withMenuButton(ctx.t) };
  const label = (c: (typeof cards)[number]) =>
    ctx.t('card-line', {
      name: c.name,
      masked: c.maskedPan,
      balance: localMoney(c.balance),
      status: ctx.t('card-status', { status: c.status }),
    });
  const title = action === 'view' ? 'cards-title' : action === 'otps' ? 'otps-pick-card' : 'pick-card';
  return { text: ctx.t(title), keyboard: cardListKeyboard(ctx.t, cards, label, action) };
}

/** A card's view; from `read` when the card was just read (not read again). */
export async function cardScreen(ctx: BotContext, s: Services, cardId: string, read?: Card): Promise<Screen> {
  const account = accountOf(ctx);
  const card = read ?? (await account.getCard(cardId));
  const plans = await account.listPlans();
  return {
    text: cardView(
      ctx.t,
      card,
      plans.find((p) => p.id === card.planId),
    ),
    keyboard: cardKeyboard(
      ctx.t,
      card,
      card.status === 'closed' || card.status === 'processing' ? undefined : await webAppDetailsUrl(ctx, s, cardId),
      { watch: s.cards.watchCard !== undefined, controls: s.cards.mode === 'embedded' },
    ),
  };
}

/**
 * With `WEBAPP_URL` set: the Mini App's address with a new one-time nonce for this card, this user and
 * this chat's link. Issued when the button is drawn, since Telegram tells the bot nothing when a Mini App
 * button is pressed; the nonce lasts a few minutes, so an older view's Details says to open the card again.
 */
export async function webAppDetailsUrl(ctx: BotContext, s: Services, cardId: string): Promise<string | undefined> {
  const base = s.config.webAppUrl;
  if (base === undefined || !ctx.link || !ctx.from || ctx.chat?.type !== 'private') return undefined;
  const binding = { cardId, telegramUserId: ctx.from.id, chatId: ctx.chat.id, tokenHash: ctx.link.tokenHash };
  return webAppButtonUrl(base, await issueWebAppNonce(s.db, binding, s.clock.now()));
}

export async function transactionsScreen(ctx: BotContext, page: number, cardId?: string): Promise<Screen> {
  const result = await accountOf(ctx).listTransactions({ page, limit: 5, card_id: cardId });
  const { pagination } = result;
  if (result.data.length === 0) return { text: ctx.t('tx-none'), keyboard: pagerKeyboard(ctx.t, 1, false, false, cardId) };
  const lines = result.data.map((tx) => transactionLine(ctx.t, tx));
  return {
    text: [ctx.t('tx-title', { page: pagination.page, pages: pagination.totalPages }), ...lines].join('\n'),
    keyboard: pagerKeyboard(ctx.t, pagination.page, pagination.hasPrev, pagination.hasNext, cardId),
  };
}

/** Telegram's answers to an edit of a message it no longer lets the bot edit (too old, deleted, not text). */
const CANNOT_EDIT = /message can't be edited|message to edit not found|there is no text in the message to edit/;

/**
 * Shows a screen where the user is looking. A press on a button under one of the bot's messages redraws
 * that message, so moving between screens does not fill the chat up; anything else (a command, typed
 * text) gets a new message, and so does a press on a message Telegram no longer lets the bot edit.
 * `apart`: the pressed message stays as it is (a pushed alert, kept as a record) and the screen comes new.
 */
export async function show(ctx: Context, screen: Screen, options: { apart?: boolean } = {}): Promise<void> {
  const extra = { reply_markup: screen.keyboard };
  if (!options.apart && ctx.callbackQuery?.message) {
    try {
      await ctx.editMessageText(screen.text, extra);
      return;
    } catch (error) {
      // The same screen drawn again (a double tap) is already there.
      if (error instanceof GrammyError && error.description.includes('message is not modified')) return;
      if (!(error instanceof GrammyError && CANNOT_EDIT.test(error.description))) throw error;
    }
  }
  await ctx.reply(screen.text, extra);
}
