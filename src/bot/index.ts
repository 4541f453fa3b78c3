import { getOrCreate } from '../infra/get-or-create.js';
import { autoRetry } from '@grammyjs/auto-retry';
import { conversations, createConversation } from '@grammyjs/conversations';
import { limit } from '@grammyjs/ratelimiter';
import { sequentialize } from '@grammyjs/runner';
import { Bot, Composer, Context, type Middleware, type WebhookReplyEnvelope } from 'grammy';
import type { Update, UserFromGetMe } from 'grammy/types';
import type { BotContext, ConversationContext } from './context.js';
import { FLOWS_CONVERSATION_ID, flowsConversation } from './conversations/flows.js';
import { startDeletionLoop } from './jobs/deletions.js';
import { adminReporter, AnsweredCallbacks, handleBotError } from './runtime/error-boundary.js';
import { createInbox, type Inbox, type InboxOptions } from './runtime/inbox.js';
import { oldestUnhandledAt } from './runtime/inbox-store.js';
import { inboxWebhookRoute, type WebhookRoute } from './runtime/inbox-webhook.js';
import { loggableError } from '../infra/log-safe.js';
import { cancelFeature } from './features/cancel.js';
import { cardsFeature } from './features/cards.js';
import { groupFeature } from './features/group.js';
import { adminChatFeature, remoteAdminChatFeature } from './features/admin-chat.js';
import { depositsFeature } from './features/deposits.js';
import { checkoutFeature, successfulPaymentFeature } from './features/payments.js';
import { embeddedCardService } from './card-service/embedded.js';
import { callerMiddleware, chatRecordReader, linkChat, linkFeature, requireLinked } from './features/link.js';
import { createMainMenu, menuFeature } from './features/menu.js';
import { pastedTokenFeature } from './features/pasted-token.js';
import { unhandledFeature } from './features/unhandled.js';
import { createI18n, createTranslators, localeOf, translations } from './ui/i18n.js';
import { startOutboxLoop } from './jobs/outbox.js';
import { newClaimant } from '../db/claims.js';
import { claimPolling } from './runtime/poller-lease.js';
import { startDurablePolling } from './runtime/polling.js';
import { botTables } from './store/tables.js';
import { ChatLinks } from './store/chat-links.js';
import { countPendingDeletions } from './store/pending-deletions.js';
import type { BotMetrics } from './metrics.js';
import type { BotDeps, Services } from './services.js';
import { conversationStorage } from './runtime/storage.js';
import { holdsApiToken, messageTextOf } from './token-scan.js';
import { ALLOWED_UPDATES, updateOriginOf } from './runtime/update-types.js';
import { ratelimiterStorage, WindowCounts } from '../infra/window-counts.js';

export type { BotConfig, BotDeps } from './services.js';
export type { BotContext } from './context.js';
export { ALLOWED_UPDATES } from './runtime/update-types.js';

/** The rate limiter's answer: a line in chat, and a pressed button answered so the client stops spinning. */
function tooFast(ctx: BotContext): void {
  const text = ctx.t('rate-limited');
  const answer = ctx.callbackQuery ? ctx.answerCallbackQuery({ text }) : ctx.reply(text);
  void answer.catch(() => undefined);
}

/** Telegram Business updates, which are dropped even if they come (one asked for them earlier, a test). */
const isBusinessUpdate = (update: Update) =>
  update.business_message !== undefined ||
  update.edited_business_message !== undefined ||
  update.business_connection !== undefined ||
  update.deleted_business_messages !== undefined;

/**
 * A bot that counts the updates it is handling, so a shutdown can wait for the last one to finish (the
 * runner's stop does not). Counted where every update enters (the runner, webhooks and tests all call
 * `handleUpdate`) rather than in a middleware, which costs every update a frame more.
 */
/**
 * The bot `createBot` builds, with what it was built from: its services (`services`), which the background
 * jobs and the command list read, and a count of the updates being handled (`settled`).
 */
export class CardsBot extends Bot<BotContext> {
  /** Set once by `createBot`, before the bot handles anything. */
  services!: Services;
  #inFlight = 0;
  #idle: (() => void)[] = [];
  /** Logs each update's type and chat at debug; set only when debug is enabled, so it costs nothing otherwise. */
  logUpdate: ((update: Update) => void) | undefined;
  /** Counts and times each update handled (`METRICS_PORT`), here for the same reason as the in-flight count. */
  metrics: BotMetrics | undefined;
  override async handleUpdate(update: Update, webhookReplyEnvelope?: WebhookReplyEnvelope): Promise<void> {
    this.logUpdate?.(update);
    // Dropped before any middleware: no reply, no rate-limit count, no link check, no database read.
    if (isBusinessUpdate(update)) return;
    this.#inFlight++;
    const started = performance.now();
    try {
      await super.handleUpdate(update, webhookReplyEnvelope);
    } finally {
      this.metrics?.handled(update, performance.now() - started);
      if (--this.#inFlight === 0) for (const resolve of this.#idle.splice(0)) resolve();
    }
  }
  /** Resolves once no update is being handled. */
  settled(): Promise<void> {
    return this.#inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.#idle.push(resolve));
  }
}

/** The update's type (its one field beside `update_id`) and its chat's id, if it has one: nothing of its content. */
export function updateSummary(update: Update): { updateId: number; updateType: string; chatId?: number } {
  const { updateType, chatId } = updateOriginOf(update);
  return chatId === undefined ? { updateId: update.update_id, updateType } : { updateId: update.update_id, updateType, chatId };
}

/**
 * Contexts whose `logger` is a child carrying the update id, made only when something is logged. A
 * getter on the class, not a property defined on each context: that made every context slower to use.
 */
function contextClass(logger: BotDeps['logger'], translatorFor: (locale: string) => BotContext['t']) {
  const children = new WeakMap<Context, BotDeps['logger']>();
  return class extends Context {
    get logger(): BotDeps['logger'] {
      return getOrCreate(children, this, () => logger.child({ updateId: this.update.update_id }));
    }
    /** Texts in the user's language (English unless their Telegram is in Russian). */
    get t(): BotContext['t'] {
      return translatorFor(localeOf(this));
    }
    get translate(): BotContext['t'] {
      return this.t;
    }
  };
}

export interface CreateBotOptions {
  botInfo?: UserFromGetMe;
  fetch?: typeof fetch;
  /**
   * Run each chat's updates one at a time, in this process (true by default). False where something
   * else already does, across processes: the webhook inbox.
   */
  sequentialize?: boolean;
}

/** The most rows a scrape's look at a table counts: enough to show a backlog, and cheap however long it grows. */
const COUNTED_AT_MOST = 10_000;

/** Points the scrape-time gauges at the bot's database: its outbox (a service without one has none to wait), deletions and inbox. */
function watchBacklog(s: Services, metrics: BotMetrics): void {
  const { events } = s.cards;
  metrics.watch({
    outboxDepth: async () => (events ? events.waiting(COUNTED_AT_MOST) : 0),
    deletionsPending: () => countPendingDeletions(s.db, COUNTED_AT_MOST),
    inboxLagSeconds: async () => {
      const oldest = await oldestUnhandledAt(s.db, COUNTED_AT_MOST);
      return oldest ? Math.max(0, (s.clock.now().getTime() - oldest.getTime()) / 1000) : 0;
    },
  });
}

/**
 * The bot: every feature registered in order inside one error boundary. Nothing runs until it is
 * started (`startBot` for polling, `startWebhookBot` for webhooks) or fed with `bot.handleUpdate`.
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
    ContextConstructor: contextClass(deps.logger, translatorFor) as unknown as new (
      ...args: ConstructorParameters<typeof Context>
    ) => BotContext,
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

  const db = botTables(deps.db);
  // `wakeDeletions` does nothing until the background jobs start (`startBackgroundJobs`).
  const { core, funding, cards: given, ...shared } = deps;
  const cards = given ?? embeddedCardService({ core: core!, db: deps.db, clock: deps.clock, funding });
  const s: Services = { ...shared, db, cards, links: new ChatLinks(db), i18n, answered, wakeDeletions: () => {} };
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
  if (deps.config.rateLimit !== false) {
    const rate = deps.config.rateLimit ?? { timeFrameMs: 3000, limit: 10 };
    // With Redis (`REDIS_URL`) every process adds to one count per user, so a flood split across them is held too.
    const shared = deps.redis && { storageClient: ratelimiterStorage(new WindowCounts(deps.redis, deps.logger), rate.timeFrameMs) };
    // Payments are never dropped: a checkout unanswered fails the payment, a payment unhandled is money not credited.
    const keyGenerator = (ctx: BotContext) =>
      ctx.preCheckoutQuery || ctx.message?.successful_payment ? undefined : ctx.from?.id.toString();
    bot.use(
      limit({ timeFrame: rate.timeFrameMs, limit: rate.limit, onLimitExceeded: tooFast, keyGenerator, keyPrefix: 'bot:user:', ...shared }),
    );
  }
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
    new Composer<BotContext>(linkFeature(s, mainMenu), menuFeature(s, mainMenu), cardsFeature(s), depositsFeature(s), unhandledFeature(s)),
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

/** The command list shown by Telegram clients, in English and Russian. */
export async function setCommands(bot: CardsBot): Promise<void> {
  const { i18n, cards } = bot.services;
  // Money in is our embedded wallet's: not offered in front of another service (/deposit still says why).
  // `/addcard` is for a service that lists no cards (remote mode): ours lists them all.
  const names = ['start', 'menu', 'cards', 'topup', 'freeze', 'details', 'addcard', 'deposit', 'cancel', 'help', 'unlink'].filter(
    (c) => (c !== 'deposit' || cards.funding !== undefined) && (c !== 'addcard' || cards.mode === 'remote'),
  );
  for (const locale of ['en', 'ru'] as const) {
    const t = (key: string) => i18n.t(locale, key);
    const commands = names.map((c) => ({
      command: c,
      description: t(`cmd-${c}`),
    }));
    await bot.api.setMyCommands(commands, locale === 'en' ? {} : { language_code: locale });
  }
}

/** The running background jobs of a bot. */
export interface BackgroundJobs {
  /** Settles once pushes are woken by events committed in other processes too (Postgres); at once otherwise. */
  listening: Promise<void>;
  stop(): Promise<void>;
}

/**
 * The outbox push and the deletion scheduler; needed in both polling and webhook mode. Any number of
 * bot processes may run them over one database: they claim the rows they work on. The push runs as
 * soon as events are committed (`wakeOnCommit`, true by default), and polls as well.
 */
export function startBackgroundJobs(bot: CardsBot, options: { wakeOnCommit?: boolean } = {}): BackgroundJobs {
  const s = bot.services;
  const report = adminReporter(bot.api, s);
  // Who this instance is when it claims work; its loops work through tables of their own.
  const claimant = newClaimant(s.clock);
  const deletions = startDeletionLoop({
    api: bot.api,
    db: s.db,
    clock: s.clock,
    logger: s.logger,
    i18n: s.i18n,
    intervalMs: s.config.pollIntervalMs ?? 500,
    report,
    claimant,
  });
  s.wakeDeletions = deletions.wake;
  const outbox = startOutboxLoop(s, bot.api, report, claimant);
  const committed = options.wakeOnCommit === false ? undefined : s.cards.events?.onCommitted(outbox.wake);
  return {
    listening: committed?.ready ?? Promise.resolve(),
    async stop() {
      await committed?.close();
      await Promise.all([outbox.stop(), deletions.stop()]);
    },
  };
}

/** Resolves once every update the bot is handling has finished (the runner's stop does not wait for them). */
export function updatesSettled(bot: CardsBot): Promise<void> {
  if (!(bot instanceof CardsBot)) throw new Error('updatesSettled: the bot was not made by createBot');
  return bot.settled();
}

export interface RunningBot {
  bot: Bot<BotContext>;
  /** Stops fetching, finishes the updates in flight and the background jobs. */
  stop(): Promise<void>;
}

/**
 * `bot.init()` (getMe), with a warning when Telegram has not answered after a while: auto-retry waits out an
 * unreachable Telegram without a word, and the start would otherwise just hang.
 */
async function initBot(bot: CardsBot, deps: BotDeps): Promise<void> {
  const notice = setTimeout(
    () =>
      deps.logger.warn(
        { apiHost: new URL(deps.config.apiRoot).host },
        'Telegram has not answered yet; still trying (check TELEGRAM_API_ROOT and the network)',
      ),
    deps.config.slowStartNoticeMs ?? 10_000,
  );
  try {
    await bot.init();
  } finally {
    clearTimeout(notice);
  }
}

/**
 * Long polling with the command list set and the background jobs running. Each fetched batch is stored in
 * the durable inbox before the next poll confirms it to Telegram, then handled from there (one chat's
 * updates at a time, in order), as webhook updates are: a crash loses no update, a paid payment included.
 */
export async function startBot(deps: BotDeps): Promise<RunningBot> {
  const bot = createBot(deps, { sequentialize: false });
  await initBot(bot, deps);
  // One poller per bot: a second process on the same database is refused (PollerTakenError).
  const lease = await claimPolling(botTables(deps.db), deps.clock, deps.logger, deps.config.pollerLeaseMs);
  try {
    await bot.api.deleteWebhook();
    await setCommands(bot);
  } catch (error) {
    await lease.release();
    throw error;
  }
  const jobs = startBackgroundJobs(bot);
  // Updates a crashed poller had stored and not handled are taken up by the inbox's sweep once their chats' leases lapse.
  const inbox = botInbox(bot, deps.config.inbox);
  const polling = startDurablePolling({ api: bot.api, inbox, logger: deps.logger, allowedUpdates: ALLOWED_UPDATES });
  deps.logger.info({ username: bot.botInfo.username }, 'bot polling');
  return {
    bot,
    async stop() {
      await polling.stop();
      await inbox.stop();
      await updatesSettled(bot);
      await jobs.stop();
      await lease.release();
    },
  };
}

export interface Webhook {
  /** The route to mount: `app.post(path, webhook.handler)`. */
  handler: WebhookRoute;

  /** Stops taking stored updates; resolves once the updates in hand are handled. */
  stop(): Promise<void>;
}

const holdsText = (update: Update) => messageTextOf(update) !== undefined;

/** The bot's durable per-chat inbox (src/bot/runtime/inbox.ts), which webhook posts and polled batches feed alike. */
function botInbox(bot: CardsBot, options: Pick<InboxOptions, 'leaseMs' | 'sweepIntervalMs'> = {}): Inbox {
  const s = bot.services;
  return createInbox({
    db: s.db,
    clock: s.clock,
    logger: s.logger,
    handle: (update) => bot.handleUpdate(update),
    report: adminReporter(bot.api, s),
    // A remote service's tokens have no known shape: any text may be one, so every text waits sealed.
    secrets: { holds: s.cards.mode === 'remote' ? holdsText : holdsApiToken, ...(s.cipher ? { cipher: s.cipher } : {}) },
    ...options,
  });
}

/**
 * The webhook for Fastify, over the durable per-chat inbox (src/bot/runtime/inbox.ts): each update is stored
 * and answered 200 at once, then handled by whichever process holds its chat's lease, one at a time
 * and in update_id order across every process on the database. A request whose
 * `X-Telegram-Bot-Api-Secret-Token` header differs from `secretToken` gets 401. Make the bot with
 * `sequentialize: false`: the inbox already runs a chat's updates one at a time.
 *
 * @example
 * const webhook = webhookInbox(bot, secret);
 * app.post('/telegram/webhook', webhook.handler);
 * // at shutdown, after the HTTP server has stopped:
 * await webhook.stop();
 */
export function webhookInbox(bot: CardsBot, secretToken: string, options: Pick<InboxOptions, 'leaseMs' | 'sweepIntervalMs'> = {}): Webhook {
  const inbox = botInbox(bot, options);
  return { handler: inboxWebhookRoute(inbox, secretToken), stop: () => inbox.stop() };
}

/**
 * Webhook mode: registers `url` with Telegram under `secretToken` and returns the handler to mount
 * (`app.post(path, handler)`), which checks the `X-Telegram-Bot-Api-Secret-Token` header. Several
 * processes may serve the same bot on one database (see `webhookInbox`).
 */
export async function startWebhookBot(
  deps: BotDeps,
  webhook: {
    url: string;
    secretToken: string;
    /** Starts serving the handler; called before the webhook is registered, so Telegram's first post finds it. */
    serve?: (handler: WebhookRoute) => Promise<void>;
    inbox?: Pick<InboxOptions, 'leaseMs' | 'sweepIntervalMs'>;
  },
): Promise<RunningBot & { handler: WebhookRoute }> {
  const bot = createBot(deps, { sequentialize: false });
  await initBot(bot, deps);
  const inbox = webhookInbox(bot, webhook.secretToken, webhook.inbox);
  const handler = inbox.handler;
  try {
    await webhook.serve?.(handler);
    await setCommands(bot);
    await bot.api.setWebhook(webhook.url, { secret_token: webhook.secretToken, allowed_updates: ALLOWED_UPDATES });
  } catch (error) {
    await inbox.stop();
    throw error;
  }
  const jobs = startBackgroundJobs(bot);
  return {
    bot,
    handler,
    // The HTTP server stops taking posts first; stored updates not yet in hand wait for another process.
    async stop() {
      await inbox.stop();
      await updatesSettled(bot);
      await jobs.stop();
    },
  };
}
