import { Composer, type Context } from 'grammy';
import { isDepositError } from '../card-service/from-core.js';
import type { DepositRequest, ServiceStats } from '../card-service/from-core.js';
import type { BotContext } from '../context.js';
import { ADMIN_CHAT_LOCALE } from '../jobs/deposit-notices.js';
import {
  adminName,
  decisionKeyboard,
  decodeDecisionCallback,
  depositRefusalText,
  presetReasonKey,
  reasonsKeyboard,
  requestCard,
  translatorIn,
} from '../ui/deposit-texts.js';
import { loggableError } from '../../infra/log-safe.js';
import { localMoney, type T } from '../ui/format.js';
import { botStats } from '../store/stats.js';
import { deleteKv, readKv, writeKv } from '../store/kv.js';
import { fundingOf, type Services } from '../services.js';

/** Where the request behind a "reply with the reason" prompt is kept: the prompt's message, in the admins' chat. */
const reasonPromptKey = (chatId: number, promptMessageId: number) => `deposit-reason:${chatId}:${promptMessageId}`;

/**
 * The admins' chat (`ADMIN_CHAT_ID`): Approve and Reject under each deposit request, a reason for each
 * rejection (a preset, or typed as a reply to the bot's prompt), and `/stats`. Only users listed in
 * `ADMIN_USER_IDS` may act; anyone else is told so and nothing changes. Registered before the group
 * feature, which answers every other group with one line.
 */
export function adminChatFeature(s: Services): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  const adminChat = composer.filter((ctx) => s.config.adminChatId !== undefined && ctx.chat?.id === s.config.adminChatId);
  const isAdmin = (ctx: Context) => ctx.from !== undefined && (s.config.adminUserIds ?? []).includes(ctx.from.id);
  const decidedBy = (ctx: Context) => `telegram:${ctx.from!.id}`;

  adminChat.command('stats', async (ctx) => {
    if (!isAdmin(ctx)) return ctx.reply(ctx.t('admin-not-allowed'));
    await ctx.reply(statsText(ctx.t, await fundingOf(s).stats.read()));
  });

  adminChat.callbackQuery(/^dr:/, async (ctx) => {
    const data = decodeDecisionCallback(ctx.callbackQuery.data);
    if (!data) return ctx.answerCallbackQuery({ text: ctx.t('button-expired') });
    if (!isAdmin(ctx)) return ctx.answerCallbackQuery({ text: ctx.t('admin-not-allowed'), show_alert: true });
    try {
      switch (data.action) {
        case 'reasons':
        case 'back':
          await ctx.answerCallbackQuery();
          await ctx.editMessageReplyMarkup({
            reply_markup: data.action === 'back' ? decisionKeyboard(ctx.t, data.id) : reasonsKeyboard(ctx.t, data.id),
          });
          return;
        case 'approve': {
          const { request } = await fundingOf(s).deposits.approve(data.id, decidedBy(ctx));
          await ctx.answerCallbackQuery({ text: ctx.t('deposit-approved-short', { id: String(request.id) }) });
          await showDecision(ctx, s, ctx.callbackQuery.message?.message_id, request);
          return;
        }
        case 'reject': {
          const reason = translatorIn(s.i18n, 'en')(presetReasonKey(data.preset));
          const request = await fundingOf(s).deposits.reject(data.id, decidedBy(ctx), reason);
          await ctx.answerCallbackQuery({ text: ctx.t('deposit-rejected-short', { id: String(request.id) }) });
          await showDecision(ctx, s, ctx.callbackQuery.message?.message_id, request);
          return;
        }
        case 'other': {
          await ctx.answerCallbackQuery();
          const prompt = await ctx.reply(ctx.t('deposit-reason-ask', { id: String(data.id) }), {
            reply_markup: { force_reply: true, input_field_placeholder: ctx.t('deposit-reason-placeholder') },
          });
          const card = ctx.callbackQuery.message?.message_id ?? 0;
          await writeKv(s.db, reasonPromptKey(prompt.chat.id, prompt.message_id), `${data.id}:${card}`, s.clock.now());
          return;
        }
      }
    } catch (error) {
      if (!isDepositError(error)) throw error;
      await ctx.answerCallbackQuery({ text: depositRefusalText(ctx.t, error), show_alert: true });
      // Decided elsewhere (another admin, the command line): the card shows how.
      if (error.code === 'ALREADY_DECIDED')
        await showDecision(ctx, s, ctx.callbackQuery.message?.message_id, await fundingOf(s).deposits.get(data.id));
    }
  });

  // A typed reason: a reply to the bot's prompt (Telegram delivers replies to the bot's messages even in privacy mode).
  adminChat.on('message:text', async (ctx, next) => {
    const replyTo = ctx.message.reply_to_message;
    const key = replyTo && reasonPromptKey(ctx.chat.id, replyTo.message_id);
    const stored = key && (await readKv(s.db, key));
    if (!key || !stored) return next();
    if (!isAdmin(ctx)) return ctx.reply(ctx.t('admin-not-allowed'));
    const [id, card] = stored.split(':').map(Number) as [number, number];
    try {
      const request = await fundingOf(s).deposits.reject(id, decidedBy(ctx), ctx.message.text);
      await deleteKv(s.db, key);
      await ctx.reply(ctx.t('deposit-rejected-short', { id: String(id) }));
      await showDecision(ctx, s, card, request);
    } catch (error) {
      if (!isDepositError(error)) throw error;
      if (error.code === 'ALREADY_DECIDED' || error.code === 'REQUEST_NOT_FOUND') await deleteKv(s.db, key);
      await ctx.reply(depositRefusalText(ctx.t, error));
    }
  });
  return composer;
}

/** Redraws the request's card in the admins' chat with its decision, without buttons. */
async function showDecision(ctx: BotContext, s: Services, cardMessageId: number | undefined, request: DepositRequest): Promise<void> {
  if (!cardMessageId || !ctx.chat) return;
  const by = request.decidedBy === `telegram:${ctx.from?.id}` && ctx.from ? adminName(ctx.from) : (request.decidedBy ?? undefined);
  // In the language the card was posted in, so that it reads as one.
  const text = requestCard(translatorIn(s.i18n, ADMIN_CHAT_LOCALE), request, by);
  await ctx.api
    .editMessageText(ctx.chat.id, cardMessageId, text, { reply_markup: undefined })
    .catch((error: unknown) => ctx.logger.debug({ err: loggableError(error) }, 'could not redraw a deposit request'));
}

function statsText(t: T, stats: ServiceStats): string {
  return t('stats-text', {
    day: stats.day,
    users: stats.users,
    active: stats.cards.active,
    frozen: stats.cards.frozen,
    closed: stats.cards.closed,
    wallets: localMoney(stats.walletTotal),
    cards: localMoney(stats.cardTotal),
    fees: localMoney(stats.feesToday),
    pending: stats.pendingDeposits.count,
    pendingAmount: localMoney(stats.pendingDeposits.amount),
  });
}

/**
 * The admins' chat in remote mode: `/stats` counts what the bot sees (linked chats and users, the cards it
 * knows and watches, pushes today); there are no deposit requests to decide (money in is the service's).
 */
export function remoteAdminChatFeature(s: Services): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  const adminChat = composer.filter((ctx) => s.config.adminChatId !== undefined && ctx.chat?.id === s.config.adminChatId);
  adminChat.command('stats', async (ctx) => {
    if (!ctx.from || !(s.config.adminUserIds ?? []).includes(ctx.from.id)) return ctx.reply(ctx.t('admin-not-allowed'));
    const stats = await botStats(s.db, s.clock.now());
    await ctx.reply(ctx.t('stats-remote', { day: s.clock.now().toISOString().slice(0, 10), ...stats }));
  });
  return composer;
}
