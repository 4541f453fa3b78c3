import type { Kysely } from 'kysely';

/**
 * The tables of migrations/20261126_02_remote_watch.ts and 20261128_01_remote_plans_own_operations.ts. Times
 * are ISO 8601 strings (UTC), which sort as they compare; amounts integer cents (a Postgres `bigint` reads
 * back as a string).
 */
export type RemoteWatchTables = {
  bot_remote_cards: {
    user_id: string;
    card_id: string;
    added_at: string;
    watch_until: string | null;
    last_polled_at: string | null;
    baselined_at: string | null;
    plan_id: number | null;
    limit_cents: number | string | null;
    creation_fee: number | string | null;
    withdrawal_attempted_at: string | null;
  };
  bot_remote_users: { user_id: string; last_polled_at: string | null; baselined_at: string | null };
  bot_remote_seen: { user_id: string; kind: 'otp' | 'transaction'; item_id: string; seen_at: string };
  bot_remote_own_operations: { id: string; user_id: string; card_id: string; side: Side; hold_until: string };
};

/** The side a transaction has on its card. */
export type Side = 'Credit' | 'Debit';

/** Any of our Kysely handles (the core's `Db`, the bot's `BotDb`, a transaction of either): the tables are reached through `withTables`. */
// biome-ignore lint/suspicious/noExplicitAny: any handle, whatever tables it is typed with
export type AnyDb = Kysely<any>;

export const remoteTables = (db: AnyDb) => db.withTables<RemoteWatchTables>() as unknown as Kysely<RemoteWatchTables>;

/** A time in ms as the tables keep it. */
export const iso = (ms: number) => new Date(ms).toISOString();
