import { createBot } from '../index.js';
import { startBackgroundJobs } from '../jobs/background-jobs.js';
import type { BotDeps } from '../services.js';
import { botInbox } from './bot-inbox.js';
import { type CardsBot, updatesSettled } from './cards-bot.js';
import { setCommands } from './commands.js';
import type { InboxOptions } from './inbox.js';
import { inboxWebhookRoute, type WebhookRoute } from './inbox-webhook.js';
import { initBot, type RunningBot } from './running-bot.js';
import { ALLOWED_UPDATES } from './update-types.js';

export interface Webhook {
  /** The route to mount: `app.post(path, webhook.handler)`. */
  handler: WebhookRoute;

  /** Stops taking stored updates; resolves once the updates in hand are handled. */
  stop(): Promise<void>;
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
