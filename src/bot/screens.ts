import type { InlineKeyboard } from 'grammy';
import type { Caller } from '../core/views.js';
import type { BotContext } from './context.js';
import { cardView, localMoney, transactionLine } from './format.js';
import { cardKeyboard, cardListKeyboard, pagerKeyboard, type ListAction } from './keyboards.js';
import { lastCardKey, readKv } from './repository.js';
import type { Services } from './services.js';
import { issueWebAppNonce, webAppButtonUrl } from './webapp-nonces.js';

/** Screens shown from several places (menu, commands, buttons): each reads the core and renders. */

export interface Screen {
  text: string;
  keyboard?: InlineKeyboard;
}

export function callerOf(ctx: BotContext): Caller {
  if (!ctx.caller) throw new Error('A linked chat was expected here');
  return ctx.caller;
}

export async function walletScreen(ctx: BotContext, s: Services): Promise<Screen> {
  const wallet = await s.core.walletBalance(callerOf(ctx));
  return { text: ctx.t('wallet-balance', { balance: localMoney(wallet.balance) }) };
}

/** The caller's cards as buttons for `action`; a command's pick (topup, freeze, details) lists open cards only. */
export async function cardListScreen(ctx: BotContext, s: Services, action: ListAction = 'view'): Promise<Screen> {
  const all = await s.core.listCards(callerOf(ctx));
  const listed = action === 'view' || action === 'otps' ? all : all.filter((c) => c.status !== 'closed');
  // The card the chat last used first: with several cards, the usual one is the first button.
  const last = ctx.chat ? await readKv(s.db, lastCardKey(ctx.chat.id)) : undefined;
  const cards = [...listed.filter((c) => c.id === last), ...listed.filter((c) => c.id !== last)];
  if (cards.length === 0) return { text: ctx.t('cards-none') };
  const label = (c: (typeof cards)[number]) =>
    ctx.t('card-line', {
      name: c.name,
      masked: c.maskedPan,
      balance: localMoney(c.balance),
      status: ctx.t('card-status', { status: c.status }),
    });
  const title = action === 'view' ? 'cards-title' : action === 'otps' ? 'otps-pick-card' : 'pick-card';
  return { text: ctx.t(title), keyboard: cardListKeyboard(cards, label, action) };
}

export async function cardScreen(ctx: BotContext, s: Services, cardId: string): Promise<Screen> {
  const card = await s.core.getCard(callerOf(ctx), cardId);
  const plans = await s.core.listPlans();
  return {
    text: cardView(
      ctx.t,
      card,
      plans.find((p) => p.id === card.planId),
    ),
    keyboard: cardKeyboard(ctx.t, card, card.status === 'closed' ? undefined : await webAppDetailsUrl(ctx, s, cardId)),
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

export async function transactionsScreen(ctx: BotContext, s: Services, page: number, cardId?: string): Promise<Screen> {
  const result = await s.core.listTransactions(callerOf(ctx), { page, limit: 5, card_id: cardId });
  const { pagination } = result;
  if (result.data.length === 0) return { text: ctx.t('tx-none') };
  const lines = result.data.map((tx) => transactionLine(ctx.t, tx));
  return {
    text: [ctx.t('tx-title', { page: pagination.page, pages: pagination.totalPages }), ...lines].join('\n'),
    keyboard: pagerKeyboard(ctx.t, pagination.page, pagination.hasPrev, pagination.hasNext, cardId),
  };
}

/** Edits the message the button is under when there is one, else sends a new message. */
export async function show(ctx: BotContext, screen: Screen, mode: 'edit' | 'reply'): Promise<void> {
  const extra = { reply_markup: screen.keyboard };
  if (mode === 'edit' && ctx.callbackQuery?.message) {
    try {
      await ctx.editMessageText(screen.text, extra);
    } catch (error) {
      if (!String(error).includes('message is not modified')) throw error;
    }
    return;
  }
  await ctx.reply(screen.text, extra);
}
