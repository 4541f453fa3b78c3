import { autoRetry } from '@grammyjs/auto-retry';
import { conversations, createConversation } from '@grammyjs/conversations';
import { sequentialize } from '@grammyjs/runner';
import { Composer, type Middleware } from 'grammy';
import type { UserFromGetMe } from 'grammy/types';
import { loggableError } from '../infra/log-safe.js';
import type { BotContext, ConversationContext } from './context.js';
import { FLOWS_CONVERSATION_ID, flowsConversation } from './conversations/flows.js';
import { adminChatFeature, remoteAdminChatFeature } from './features/admin-chat.js';
import { cancelFeature } from './features/cancel.js';
import { autoTopupFeature } from './features/auto-topup.js';
import { cardsFeature } from './features/cards.js';
import { challengesFeature } from './features/challenges.js';
import { declineFixesFeature } from './features/decline-fixes.js';
import { depositsFeature } from './features/deposits.js';
import { groupFeature } from './features/group.js';
import { limitsFeature } from './features/limits.js';
import { callerMiddleware, chatRecordReader, linkChat, linkFeature, requireLinked } from './features/link.js';
import { createMainMenu, menuFeature } from './features/menu.js';
import { pastedTokenFeature } from './features/pasted-token.js';
import { checkoutFeature, successfulPaymentFeature } from './features/payments.js';
import { unhandledFeature } from './features/unhandled.js';
import { watchBacklog } from './runtime/backlog-gauges.js';
import { CardsBot } from './runtime/cards-bot.js';
import { contextClass } from './runtime/context-class.js';
import { AnsweredCallbacks, handleBotError } from './runtime/error-boundary.js';
import { rateLimit } from './runtime/rate-limit.js';
import { conversationStorage } from './runtime/storage.js';
import { updateSummary } from './runtime/update-types.js';
import { type BotDeps, createServices } from './services.js';
import { holdsApiToken } from './token-scan.js';
import { createI18n, createTranslators, translations } from './ui/i18n.js';

/*
 * The composition root: the bot built from its services, its features registered in order inside one error
 * boundary, "unhandled" last. How it is started (polling, webhook), its command list and its background
 * jobs are in runtime/ and jobs/.
 */

export interface CreateBotOptions {
  botInfo?: UserFromGetMe;
  fetch?: typeof fetch;
  /**
   * Run each chat's updates one at a time, in this process (true by default). False where something
   * else already does, across processes: the webhook inbox.
   */
  sequentialize?: boolean;
}

/**
 * The bot: every feature registered in order inside one error boundary. Nothing runs until it is
 * started (`startBot` for polling, `startWebhookBot` for webhooks: runtime/start-polling.ts and
 * runtime/start-webhook.ts) or fed with `bot.handleUpdate`.
 *
 * @example
 * const bot = createBot({ core, db, clock, logger, config: { token, apiRoot, sensitiveTtlSeconds: 60, otpTtlSeconds: 300 } });
 * await bot.handleUpdate(update);
 */
export function createBot(deps: BotDeps, options: CreateBotOptions = {}): CardsBot {
  const client = { apiRoot: deps.config.apiRoot, ...(options.fetch ? { fetch: options.fetch } : {}) };
  const i18n = createI18n<BotContext>();
  const translatorFor = createTranslators(i18n);
  const bot = new CardsBot(deps.config.token, {
    botInfo: options.botInfo,
    client,
    ContextConstructor: contextClass(deps.logger, translatorFor),
  });
  // Decided once: the update path pays nothing for it unless debug is on.
  if (deps.logger.isLevelEnabled('debug')) bot.logUpdate = (update) => deps.logger.debug(updateSummary(update), 'update');
  if (deps.metrics) {
    bot.metrics = deps.metrics;
    // Before auto-retry, so under it: each failed attempt counts, the ones it waits out too.
    bot.api.config.use(deps.metrics.telegramErrors);
  }
  bot.api.config.use(autoRetry({ maxRetryAttempts: 3, maxDelaySeconds: 30 }));
  // Remembers which buttons were answered (menus and conversations answer by themselves), so an
  // error is never answered a second time, which Telegram would reject.
  const answered = new AnsweredCallbacks(deps.logger);
  bot.api.config.use(answered.transformer);

  const s = createServices(deps, i18n, answered);
  bot.services = s;
  if (deps.metrics) watchBacklog(s, deps.metrics);

  // Conversation contexts get a fresh Api: give it the bot's transformers (auto-retry and any other).
  const inConversation: Middleware<ConversationContext>[] = [
    (ctx, next) => {
      ctx.api.config.use(...bot.api.config.installedTransformers());
      return next();
    },
    translations(translatorFor) as unknown as Middleware<ConversationContext>,
  ];
  const mainMenu = createMainMenu(s);

  // Per chat, one update at a time; before conversations and menus. Webhooks get it from the inbox instead.
  if (options.sequentialize !== false) bot.use(sequentialize((ctx: BotContext) => ctx.chat?.id.toString()));
  const limited = rateLimit(deps);
  if (limited) bot.use(limited);
  // Private chats, in order. Built in one go (not with `use`), and with the features after the menu in
  // one composer of their own: every update passes a frame per middleware of each composer it enters,
  // however early it is handled, so a menu press skips those.
  const flowState = conversations<BotContext, ConversationContext>({
    // Version 2: the flows as one conversation, each entered with one object of arguments; state kept
    // under an earlier layout (version 1: positional arguments) is dropped.
    storage: { type: 'context', version: 2, adapter: conversationStorage(s.db, deps.clock) },
  });
  // The admins' chat may be a private chat too (one operator).
  // Deposit requests and payments are our embedded service's own: with another service they are not offered.
  const funded = s.cards.funding !== undefined;
  const adminChat = funded ? adminChatFeature(s) : remoteAdminChatFeature(s);
  // Money that arrived is credited whatever became of the chat's link. Entered only by the updates they take:
  // every other private update skips their composers' frames with one check.
  const paidOrAdmin = new Composer<BotContext>(funded ? successfulPaymentFeature(s) : new Composer<BotContext>(), adminChat).middleware();
  const isPaidOrAdmin = (ctx: BotContext) =>
    ctx.message?.successful_payment !== undefined || (deps.config.adminChatId !== undefined && ctx.chat?.id === deps.config.adminChatId);
  const chat = new Composer<BotContext>(
    (ctx, next) => (isPaidOrAdmin(ctx) ? paidOrAdmin(ctx, next) : next()),
    chatRecordReader(s),
    flowState,
    callerMiddleware(s),
    cancelFeature(s),
    requireLinked(),
    // Flows time out in their own waits (conversations/kit.ts), which say so to the user.
    createConversation(flowsConversation(s), { id: FLOWS_CONVERSATION_ID, plugins: inConversation }),
    mainMenu,
    new Composer<BotContext>(
      linkFeature(s, mainMenu),
      menuFeature(s, mainMenu),
      cardsFeature(s),
      limitsFeature(s),
      autoTopupFeature(s),
      declineFixesFeature(),
      challengesFeature(),
      depositsFeature(s),
      unhandledFeature(s),
    ),
  );
  // Outside private chats: the admins' chat, pre-checkout queries (they carry no chat), then any group.
  const group = new Composer<BotContext>(adminChat, funded ? checkoutFeature(s) : new Composer<BotContext>(), groupFeature());
  // A message holding an API token, in any chat, goes nowhere else: no flow, menu or command sees it.
  // (The flow state is loaded so that linking can leave a waiting flow, the menu so that it can be sent.)
  const pasted = new Composer<BotContext>(
    flowState,
    mainMenu,
    pastedTokenFeature((ctx, token) => linkChat(s, mainMenu, ctx, token)),
  );
  // One error boundary around every feature, so polling, webhooks and handleUpdate all report alike.
  // A plain dispatch: `branch` builds a composer for every update.
  bot.errorBoundary(handleBotError(s), (ctx, next) =>
    (holdsApiToken(ctx.update) ? pasted : ctx.chat?.type === 'private' ? chat : group).middleware()(ctx, next),
  );

  bot.catch((error) =>
    deps.logger.error({ err: loggableError(error.error), updateId: error.ctx.update.update_id }, 'error outside the error boundary'),
  );
  return bot;
}
