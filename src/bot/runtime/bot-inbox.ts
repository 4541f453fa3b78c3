import type { Update } from 'grammy/types';
import { holdsApiToken, messageTextOf } from '../token-scan.js';
import type { CardsBot } from './cards-bot.js';
import { adminReporter } from './error-boundary.js';
import { createInbox, type Inbox, type InboxOptions } from './inbox.js';

const holdsText = (update: Update) => messageTextOf(update) !== undefined;

/** The bot's durable per-chat inbox (src/bot/runtime/inbox.ts), which webhook posts and polled batches feed alike. */
export function botInbox(bot: CardsBot, options: Pick<InboxOptions, 'leaseMs' | 'sweepIntervalMs'> = {}): Inbox {
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
