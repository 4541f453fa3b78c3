import { Composer } from 'grammy';
import { decodeCallback, type CallbackData, type CardAction } from '../ui/callback-data.js';
import type { BotContext } from '../context.js';
import { enterFlow } from '../conversations/flows.js';
import { detailsMessage, otpLine, parseTypedAmount } from '../ui/format.js';
import { cardOffers, otpKeyboard, webAppDetailsKeyboard } from '../ui/keyboards.js';
import type { Card } from '../card-service/port.js';
import { accountOf, cardListScreen, knownCards, cardScreen, show, transactionsScreen, webAppDetailsUrl } from '../ui/screens.js';
import { lastCardKey } from '../store/kv-keys.js';
import { writeKv } from '../store/kv.js';
import { deleteLater, type Services } from '../services.js';
import { WEBAPP_NONCE_TTL_SECONDS } from '../webapp-nonces.js';

/**
 * The plain-keyboard buttons: card list, card view and its actions, transaction pages, OTPs.
 * Each button names its card; the core refuses a card that is not the caller's.
 */
export function cardsFeature(s: Services): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  composer.on('callback_query:data', async (ctx, next) => {
    const data = decodeCallback(ctx.callbackQuery.data);
    if (!data) return next();
    const notice = await handle(ctx, s, data);
    await ctx.answerCallbackQuery(notice ? { text: notice } : undefined);
  });
  // A card the bot does not know yet (a remote service lists none): added by its id, if the service says it is the user's.
  composer.command('addcard', async (ctx) => {
    const cardId = ctx.match.trim();
    if (!cardId) return void (await ctx.reply(ctx.t('addcard-usage')));
    await accountOf(ctx).getCard(cardId);
    await show(ctx, await cardScreen(ctx, s, cardId));
  });
  for (const action of ['topup', 'freeze', 'details'] as const) {
    composer.command(action, (ctx) => cardShortcut(ctx, s, action, action === 'topup' ? centsOf(ctx.match) : undefined));
  }
  return composer;
}

/**
 * An everyday operation in one step (`/topup [amount]`, `/freeze`, `/details`, the main menu's Top up):
 * straight to the card when the caller has one open card, else a list to pick it from.
 */
export async function cardShortcut(ctx: BotContext, s: Services, action: 'topup' | 'freeze' | 'details', amount?: number): Promise<void> {
  const open = (await knownCards(ctx, s)).filter((c) => c.status !== 'closed');
  if (open.length !== 1) return show(ctx, await cardListScreen(ctx, s, action));
  const cardId = open[0]!.id;
  if (action === 'topup') return enterFlow.topup(ctx, { cardId, amount });
  if (action === 'details') return void (await handle(ctx, s, { kind: 'card', action, cardId }));
  await accountOf(ctx).freeze(cardId);
  await ctx.reply(ctx.t('card-frozen'));
  await show(ctx, await cardScreen(ctx, s, cardId));
}

/** The amount typed after `/topup`, in cents; none when there is none or it is not a number. */
function centsOf(text: string): number | undefined {
  const dollars = parseTypedAmount(text);
  return text.trim() === '' || Number.isNaN(dollars) ? undefined : Math.round(dollars * 100);
}

/** Runs one button; returns the short notice for the callback answer, if any. */
async function handle(ctx: BotContext, s: Services, data: CallbackData): Promise<string | undefined> {
  if (data.kind === 'cards') {
    await show(ctx, await cardListScreen(ctx, s));
    return;
  }
  if (data.kind === 'tx') {
    await show(ctx, await transactionsScreen(ctx, data.page, data.cardId));
    return;
  }
  const notice = await act(ctx, s, data);
  // Remembered once the core took the action (a refused card is not the caller's): pickers offer it first.
  if (ctx.chat) await writeKv(s.db, lastCardKey(ctx.chat.id), data.cardId, s.clock.now());
  return notice;
}

/** The buttons a card's view offers only in some of its states: pressed, the card is read first. */
const BY_STATE: ReadonlySet<CardAction> = new Set<CardAction>([
  'topup',
  'withdraw',
  'close',
  'freeze',
  'unfreeze',
  'details',
  'alertfreeze',
]);

/**
 * A press on a button the card's view would no longer offer (an older view: the card was frozen or closed
 * since): the view is redrawn from the card as it is, in place (under an alert: in a message of its own,
 * the alert's button taken off), and the answer says what happened. Nothing else is done.
 */
async function redrawStale(ctx: BotContext, s: Services, card: Card, action: CardAction): Promise<string> {
  const screen = await cardScreen(ctx, s, card.id, card);
  if (action === 'alertfreeze') {
    await ctx.editMessageReplyMarkup({ reply_markup: undefined }).catch(() => undefined);
    await show(ctx, screen, { apart: true });
  } else await show(ctx, screen);
  return ctx.t('card-stale', { status: card.status });
}

/** One card button's action; returns the short notice for the callback answer, if any. */
async function act(ctx: BotContext, s: Services, data: Extract<CallbackData, { kind: 'card' }>): Promise<string | undefined> {
  const { cardId } = data;
  const account = accountOf(ctx);
  // The card as it is now, for a button that depends on its state (also refusing a card that is not the caller's).
  const card = BY_STATE.has(data.action) ? await account.getCard(cardId) : undefined;
  if (card && !cardOffers(card, data.action)) return redrawStale(ctx, s, card, data.action);
  switch (data.action) {
    case 'view':
      await show(ctx, await cardScreen(ctx, s, cardId));
      return;
    case 'freeze': {
      const { status } = await account.freeze(cardId);
      await show(ctx, await cardScreen(ctx, s, cardId, card && { ...card, status }));
      return ctx.t('card-frozen');
    }
    case 'alertview':
      // Under a pushed alert: the card in a message of its own, the alert kept as it was.
      await ctx.editMessageReplyMarkup({ reply_markup: undefined }).catch(() => undefined);
      await show(ctx, await cardScreen(ctx, s, cardId), { apart: true });
      return;
    case 'alertfreeze': {
      const { status } = await account.freeze(cardId);
      await ctx.editMessageReplyMarkup({ reply_markup: undefined }).catch(() => undefined);
      await show(ctx, await cardScreen(ctx, s, cardId, card && { ...card, status }), { apart: true });
      return ctx.t('card-frozen');
    }
    case 'unfreeze': {
      const { status } = await account.unfreeze(cardId);
      await show(ctx, await cardScreen(ctx, s, cardId, card && { ...card, status }));
      return ctx.t('card-unfrozen');
    }
    case 'details': {
      // With the Mini App, the details never enter the chat: a view drawn without its button (a flow's
      // redraw, an older message) gets one here, removed when its nonce expires.
      if (s.config.webAppUrl !== undefined) {
        // The card was read above: one that is not the caller's is refused there, as the details themselves would.
        const detailsUrl = await webAppDetailsUrl(ctx, s, cardId);
        if (detailsUrl) {
          const minutes = WEBAPP_NONCE_TTL_SECONDS / 60;
          const sent = await ctx.reply(ctx.t('details-open', { minutes }), { reply_markup: webAppDetailsKeyboard(ctx.t, detailsUrl) });
          await deleteLater(s, sent.chat.id, sent.message_id, WEBAPP_NONCE_TTL_SECONDS);
          return;
        }
      }
      const details = await account.getSensitiveDetails(cardId);
      const ttl = s.config.sensitiveTtlSeconds;
      const { text, entities } = detailsMessage(ctx.t, details, ttl);
      const sent = await ctx.reply(text, { entities, protect_content: true });
      await deleteLater(s, sent.chat.id, sent.message_id, ttl);
      return;
    }
    case 'otps': {
      const card = await account.getCard(cardId);
      const list = await account.listOtps(cardId);
      const lines = list.otps.map((otp) => otpLine(ctx.t, otp));
      // The e-mail request is offered only by a service that has it; "waiting for a code" where OTPs are polled.
      const offer = { email: account.requestOtp !== undefined, watch: s.cards.watchCard !== undefined };
      // None yet: said in place, with the way back to the card. Codes: a message of their own that deletes itself.
      if (!lines.length)
        return void (await show(ctx, { text: ctx.t('otps-none'), keyboard: otpKeyboard(ctx.t, cardId, { ...offer, back: true }) }));
      const text = [ctx.t('otps-title', { name: card.name }), ...lines].join('\n');
      const sent = await ctx.reply(text, { reply_markup: otpKeyboard(ctx.t, cardId, offer), protect_content: true });
      await deleteLater(s, sent.chat.id, sent.message_id, s.config.otpTtlSeconds);
      return;
    }
    case 'watch': {
      if (s.cards.watchCard === undefined) return ctx.t('button-expired');
      // Also under an OTP list (a message of its own), so not checked as a view's button: read to refuse a card
      // that is not the caller's (or gone) before anything is watched.
      await account.getCard(cardId);
      await s.cards.watchCard(account, cardId);
      return ctx.t('watch-started', { minutes: 5 });
    }
    case 'reqotp': {
      if (account.requestOtp === undefined) return ctx.t('button-expired');
      const requested = await account.requestOtp(cardId);
      // This service turned out not to have the request: said once here; OTP lists leave the button out from now on.
      if (requested === undefined) return void (await ctx.reply(ctx.t('otp-request-unavailable')));
      const name = requested.cardInfo?.name ?? (await account.getCard(cardId)).name;
      const sent = await ctx.reply(ctx.t('otp-requested', { name, code: requested.cardInfo?.otpCode ?? '—' }), {
        protect_content: true,
      });
      await deleteLater(s, sent.chat.id, sent.message_id, s.config.otpTtlSeconds);
      return;
    }
    case 'topup':
    case 'withdraw':
    case 'close':
      await enterFlow[data.action](ctx, { cardId, viewMessageId: ctx.callbackQuery?.message?.message_id });
      return;
  }
}
