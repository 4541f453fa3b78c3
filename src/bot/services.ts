import type { I18n } from '@grammyjs/i18n';
import type { Api } from 'grammy';
import type { Clock } from '../core/clock.js';
import type { Funding } from '../core/funding.js';
import { isCardServiceError } from '../core/errors.js';
import type { CardService } from '../core/service.js';
import type { Db } from '../db/schema.js';
import type { Logger } from '../logger.js';
import type { Redis } from '../redis.js';
import type { BotContext } from './context.js';
import type { AnsweredCallbacks } from './error-boundary.js';
import { toRefusal, type Refusal } from './errors.js';
import { scheduleDeletion, type BotDb, type ChatLinks } from './repository.js';

export interface BotConfig {
  token: string;
  /** The Bot API root, e.g. https://api.telegram.org or a local test server. */
  apiRoot: string;
  sensitiveTtlSeconds: number;
  otpTtlSeconds: number;
  /**
   * The Mini App page (`WEBAPP_URL`) that shows card details outside the chat; when set, Details opens it
   * with a one-time nonce instead of sending a self-deleting message.
   */
  webAppUrl?: string;
  adminChatId?: number;
  /** Telegram users who may decide deposit requests and read `/stats` in the admins' chat (`ADMIN_USER_IDS`). */
  adminUserIds?: readonly number[];
  /** Telegram Payments provider token (`PAYMENT_PROVIDER_TOKEN`): set, "Add money" offers to pay by invoice. Never logged. */
  paymentProviderToken?: string;
  /** Per-user flood limit; `false` turns it off (benchmarks). Default: 10 updates per 3 s. */
  rateLimit?: { timeFrameMs: number; limit: number } | false;
  /** A conversation waiting longer than this for the user is dropped. Default 10 minutes. */
  conversationIdleMs?: number;
  /** How often the outbox and deletion loops look for work. Default 500 ms. */
  pollIntervalMs?: number;
  /** How long a polling process's lease lasts unrenewed (a second poller waits this long before it is refused). Default 30 s. */
  pollerLeaseMs?: number;
  /** How long a start waits for Telegram's first answer before logging that it is still trying. Default 10 s. */
  slowStartNoticeMs?: number;
}

export interface BotDeps {
  core: CardService;
  db: Db;
  clock: Clock;
  logger: Logger;
  config: BotConfig;
  /** The process's Redis client (`REDIS_URL`): the per-user limit is counted there, one count for every process. */
  redis?: Redis;
  /** Deposit requests, payments and statistics (the composition root's); built over `db` when not given. */
  funding?: Funding;
}

/** What features share: the deps, the bot's tables and the texts. Built once in `createBot`. */
export interface Services extends Omit<BotDeps, 'db'> {
  db: BotDb;
  funding: Funding;
  links: ChatLinks;
  i18n: I18n<BotContext>;
  /** Callback queries already answered (a second answer is refused by Telegram). */
  answered: AnsweredCallbacks;
  /** Wakes the deletion loop when something new is scheduled. */
  wakeDeletions(): void;
}

export type Outcome<T> = { ok: T } | { refused: Refusal };

/** Runs a core call, turning a refusal into plain data (safe to keep in conversation state). */
export async function attempt<T>(call: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: await call() };
  } catch (error) {
    if (isCardServiceError(error)) return { refused: toRefusal(error) };
    throw error;
  }
}

/** Schedules a sent message for deletion after `ttlSeconds`, stored so a restart still deletes it. */
export async function deleteLater(s: Services, chatId: number, messageId: number, ttlSeconds: number): Promise<void> {
  await scheduleDeletion(s.db, chatId, messageId, new Date(s.clock.now().getTime() + ttlSeconds * 1000));
  s.wakeDeletions();
}

export type { Api };
