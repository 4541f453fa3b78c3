import type { I18n } from '@grammyjs/i18n';
import type { Api } from 'grammy';
import type { CardDataCipher, CardService, Clock, Funding } from './card-service/from-core.js';
import { isCardServiceError } from './card-service/from-core.js';
import type { CardServicePort } from './card-service/port.js';
import type { Db } from '../db/schema.js';
import type { Logger } from '../infra/logger.js';
import type { Redis } from '../infra/redis.js';
import type { BotContext } from './context.js';
import type { BotMetrics } from './metrics.js';
import type { AnsweredCallbacks } from './runtime/error-boundary.js';
import { toRefusal, type Refusal } from './ui/refusal-texts.js';
import { scheduleDeletion } from './store/pending-deletions.js';
import { botTables, type BotDb } from './store/tables.js';
import { ChatLinks } from './store/chat-links.js';
import { embeddedCardService } from './card-service/embedded.js';

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
  /** The inbox's chat leases and sweep (polling; webhook mode takes them from `startWebhookBot`'s options). */
  inbox?: { leaseMs?: number; sweepIntervalMs?: number };
  /** How long a start waits for Telegram's first answer before logging that it is still trying. Default 10 s. */
  slowStartNoticeMs?: number;
}

export interface BotDeps {
  /** The embedded core, which the bot reaches through `embeddedCardService`; needed unless `cards` is given. */
  core?: CardService;
  /** The card service the bot stands in front of, when not the embedded core (remote mode). */
  cards?: CardServicePort;
  db: Db;
  clock: Clock;
  logger: Logger;
  config: BotConfig;
  /** The process's Redis client (`REDIS_URL`): the per-user limit is counted there, one count for every process. */
  redis?: Redis;
  /**
   * Seals what the bot stores that holds a secret (an update holding an API token waits in the inbox
   * sealed); without it, such updates are never stored and are handled at once, outside their chat's order.
   */
  cipher?: CardDataCipher;
  /** Deposit requests, payments and statistics (the composition root's); built over `db` when not given. */
  funding?: Funding;
  /** The bot's metrics in the process's registry (`METRICS_PORT`); nothing is counted without them. */
  metrics?: BotMetrics;
}

/** What features share: the deps, the card service, the bot's tables and the texts. Built once in `createBot`. */
export interface Services extends Omit<BotDeps, 'db' | 'core' | 'funding'> {
  db: BotDb;
  /** The card service, reached only through its port (src/bot/card-service/). */
  cards: CardServicePort;
  links: ChatLinks;
  i18n: I18n<BotContext>;
  /** Callback queries already answered (a second answer is refused by Telegram). */
  answered: AnsweredCallbacks;
  /** Wakes the deletion loop when something new is scheduled. */
  wakeDeletions(): void;
}

/**
 * The services over the deps: the card service (the embedded core's unless one is given), the bot's
 * tables, its chat links. `wakeDeletions` does nothing until the background jobs start (`startBackgroundJobs`).
 */
export function createServices(deps: BotDeps, i18n: I18n<BotContext>, answered: AnsweredCallbacks): Services {
  const db = botTables(deps.db);
  const { core, funding, cards: given, ...shared } = deps;
  const cards = given ?? embeddedCardService({ core: core!, db: deps.db, clock: deps.clock, funding });
  return { ...shared, db, cards, links: new ChatLinks(db), i18n, answered, wakeDeletions: () => {} };
}

/**
 * Deposit requests, payments and statistics: only our embedded service has them, and the features that
 * use them are registered only then.
 */
export function fundingOf(s: Pick<Services, 'cards'>): Funding {
  const { funding } = s.cards;
  if (funding === undefined) throw new Error('this card service offers no funding');
  return funding;
}

export type Outcome<T> = { ok: T } | { refused: Refusal };

/** Runs a card-service call, turning a refusal into plain data (safe to keep in conversation state). */
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
