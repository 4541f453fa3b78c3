import { Bot, type WebhookReplyEnvelope } from 'grammy';
import type { Update } from 'grammy/types';
import type { BotContext } from '../context.js';
import type { BotMetrics } from '../metrics.js';
import type { Services } from '../services.js';

/** Telegram Business updates, which are dropped even if they come (one asked for them earlier, a test). */
const isBusinessUpdate = (update: Update) =>
  update.business_message !== undefined ||
  update.edited_business_message !== undefined ||
  update.business_connection !== undefined ||
  update.deleted_business_messages !== undefined;

/**
 * The bot `createBot` builds, with what it was built from: its services (`services`), which the background
 * jobs and the command list read, and a count of the updates being handled (`settled`), so a shutdown can
 * wait for the last one to finish (the runner's stop does not). Counted where every update enters (the
 * inbox, webhooks and tests all call `handleUpdate`) rather than in a middleware, which costs every update
 * a frame more.
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

/** Resolves once every update the bot is handling has finished (the runner's stop does not wait for them). */
export function updatesSettled(bot: CardsBot): Promise<void> {
  if (!(bot instanceof CardsBot)) throw new Error('updatesSettled: the bot was not made by createBot');
  return bot.settled();
}
