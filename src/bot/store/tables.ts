import type { Kysely } from 'kysely';
import type { Db } from '../../db/schema.js';

/** The bot's own tables (migrations/20261122_02_bot.ts). The bot never touches the core's tables. */
export type BotTables = {
  bot_chat_links: { chat_id: number; user_id: string; token_hash: string; linked_at: string; sealed_token: string | null };
  bot_kv: { key: string; value: string; updated_at: string };
  bot_pending_deletions: { chat_id: number; message_id: number; due_at: string } & Claimed;
  bot_deliveries: { seq: number; chat_id: number; delivered_at: string };
  bot_confirmations: { nonce: string; chat_id: number; created_at: string; used_at: string | null };
  bot_notices: { chat_id: number; kind: string; locale: string | null; created_at: string } & Claimed;
};

/** Who works on a queued row, until when (`src/db/claims.ts`); null when nobody does. Optional when inserting. */
type Claimed = { claimed_by?: string | null; claimed_until?: string | null };

export type BotDb = Kysely<BotTables>;

export function botTables(db: Db): BotDb {
  return db.withTables<BotTables>() as unknown as BotDb;
}
