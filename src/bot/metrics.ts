import type { Transformer } from 'grammy';
import type { Update } from 'grammy/types';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { ALLOWED_UPDATES, updateTypeOf } from './runtime/update-types.js';

/** What the outbox pushes, each counted apart: a declined transaction is a `decline`. */
export const PUSH_KINDS = ['otp', 'transaction', 'decline', 'deposit_decision', 'unlink_notice', 'auto_topup', 'challenge'] as const;
export type PushKind = (typeof PUSH_KINDS)[number];

/** What the scrape-time gauges read from the database; each reading is one small, bounded query. */
export interface BotBacklog {
  /** Events waiting in the outbox to be pushed (counted up to a bound). */
  outboxDepth(): Promise<number>;
  /** Messages scheduled for deletion and not yet deleted (counted up to a bound). */
  deletionsPending(): Promise<number>;
  /** How long the oldest update stored in the inbox and not yet handled has waited, in seconds (0 for none). */
  inboxLagSeconds(): Promise<number>;
}

/** A counter's series, shown at 0 until counted. */
function zeroed<T extends { inc(value?: number): void }>(child: T): T {
  child.inc(0);
  return child;
}

/** A gauge read at scrape time; NaN when the database cannot answer (it is closing, or down), never a failed scrape. */
function backlogGauge(registry: Registry, name: string, help: string, read: () => Promise<number> | undefined): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      try {
        this.set((await read()) ?? 0);
      } catch {
        this.set(Number.NaN);
      }
    },
  });
}

/**
 * The bot's Prometheus metrics, in the process's registry (src/infra/metrics.ts), so one `/metrics` shows them
 * beside the API's: updates handled and how long each took, by type; pushes sent and failed, by kind;
 * failed Bot API calls, by method and error code; and, read from the database at scrape time, the
 * outbox's depth, the deletions pending and the inbox's lag. Labels hold only names and codes, never a
 * token, a chat or its text. The label sets on the update path are made once here, so counting an
 * update costs two increments.
 */
export function createBotMetrics(registry: Registry) {
  const updates = new Counter({
    name: 'bot_updates_total',
    help: 'Telegram updates handled, by type (types the bot does not ask for as "other")',
    labelNames: ['type'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'bot_update_duration_seconds',
    help: 'Time the bot took to handle an update, by type',
    labelNames: ['type'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  // Shown at 0 from the start, so a rate over the first update is right.
  const series = (type: string) => {
    duration.zero({ type });
    return { count: zeroed(updates.labels({ type })), duration: duration.labels({ type }) };
  };
  const byType = new Map<string, ReturnType<typeof series>>(ALLOWED_UPDATES.map((type) => [type, series(type)]));
  const other = series('other');

  const pushes = new Counter({
    name: 'bot_pushes_total',
    help: 'Pushes the outbox sent to chats (OTPs, transactions, declines, deposit decisions, unlink notices), by kind and result',
    labelNames: ['kind', 'result'] as const,
    registers: [registry],
  });
  const pushSeries = new Map(
    PUSH_KINDS.map((kind) => [kind, { sent: zeroed(pushes.labels(kind, 'sent')), failed: zeroed(pushes.labels(kind, 'failed')) }]),
  );

  const telegramErrors = new Counter({
    name: 'bot_telegram_errors_total',
    help: 'Bot API calls that failed, by method and error code ("network" when Telegram could not be reached); each retry counts',
    labelNames: ['method', 'error_code'] as const,
    registers: [registry],
  });

  let backlog: BotBacklog | undefined;
  backlogGauge(registry, 'bot_outbox_depth', 'Events waiting in the outbox to be pushed (the whole database)', () =>
    backlog?.outboxDepth(),
  );
  backlogGauge(registry, 'bot_deletions_pending', 'Messages scheduled for self-deletion, not yet deleted', () =>
    backlog?.deletionsPending(),
  );
  backlogGauge(registry, 'bot_inbox_lag_seconds', 'Age of the oldest update stored in the inbox and not yet handled', () =>
    backlog?.inboxLagSeconds(),
  );

  return {
    /** Counts an update handled and the milliseconds it took. */
    handled(update: Update, ms: number): void {
      const of = byType.get(updateTypeOf(update)) ?? other;
      of.count.inc();
      of.duration.observe(ms / 1000);
    },

    /** Counts a push the outbox sent, or tried to send and failed. */
    pushed(kind: PushKind, sent: boolean): void {
      const of = pushSeries.get(kind)!;
      (sent ? of.sent : of.failed).inc();
    },

    /**
     * A transformer counting every Bot API call that fails: installed under auto-retry, so a refusal it
     * waits out (429) counts too. A call this process aborts (a stopping poller) is no failure.
     */
    telegramErrors: (async (prev, method, payload, signal) => {
      try {
        const response = await prev(method, payload, signal);
        if (!response.ok) telegramErrors.labels(method, String(response.error_code)).inc();
        return response;
      } catch (error) {
        if (!signal?.aborted) telegramErrors.labels(method, 'network').inc();
        throw error;
      }
    }) as Transformer,

    /** Where the scrape-time gauges read from: the bot's database, once the bot is made. */
    watch(source: BotBacklog): void {
      backlog = source;
    },
  };
}

export type BotMetrics = ReturnType<typeof createBotMetrics>;
