import { sql } from 'kysely';
import { claimRows, type Claim, type Claimant, type Queue } from '../../db/claims.js';
import { freeAt } from '../../db/lease.js';
import type { BotDb, BotTables } from './tables.js';

// The bot's own messages waiting to be deleted (`bot_pending_deletions`), worked by src/bot/jobs/deletions.ts.

export async function scheduleDeletion(db: BotDb, chatId: number, messageId: number, dueAt: Date): Promise<void> {
  await db
    .insertInto('bot_pending_deletions')
    .values({ chat_id: chatId, message_id: messageId, due_at: dueAt.toISOString() })
    .onConflict((oc) => oc.columns(['chat_id', 'message_id']).doNothing())
    .execute();
}

export async function dueDeletions(db: BotDb, now: Date, limit = 50) {
  const rows = await db
    .selectFrom('bot_pending_deletions')
    .selectAll()
    .where('due_at', '<=', now.toISOString())
    .orderBy('due_at')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ chatId: Number(row.chat_id), messageId: row.message_id }));
}

export interface DueDeletion {
  chatId: number;
  messageId: number;
}

/** The scheduled deletions as a queue: due ones, the earliest first. */
const DELETIONS: Queue = {
  table: 'bot_pending_deletions',
  key: ['chat_id', 'message_id'],
  work: (now) => sql`due_at <= ${now}`,
  order: ['due_at'],
};

/** Up to `limit` due deletions no other process holds, the earliest first, held for `claimant` until forgotten or released. */
export function claimDueDeletions(db: BotDb, claimant: Claimant, limit = 50): Promise<Claim<DueDeletion>> {
  return claimRows(db, DELETIONS, claimant, limit, (row: BotTables['bot_pending_deletions']) => ({
    chatId: Number(row.chat_id),
    messageId: Number(row.message_id),
  }));
}

/**
 * The earliest time a deletion may be claimed, to sleep exactly until then: its due time. Deletions
 * another process holds are left out: their holder deletes them (or they are looked at again on the
 * loop's next tick once its lease lapses).
 */
export async function nextDeletionDue(db: BotDb, now: Date): Promise<Date | undefined> {
  const row = await db
    .selectFrom('bot_pending_deletions')
    .select('due_at')
    .where(freeAt(now.toISOString()))
    .orderBy('due_at')
    .limit(1)
    .executeTakeFirst();
  return row ? new Date(row.due_at) : undefined;
}

/** How many messages wait to be deleted, counted up to `max` (the metrics' look: cheap however many there are). */
export async function countPendingDeletions(db: BotDb, max: number): Promise<number> {
  const row = await db
    .selectFrom((eb) => eb.selectFrom('bot_pending_deletions').select('due_at').limit(max).as('pending'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function forgetDeletion(db: BotDb, chatId: number, messageId: number): Promise<void> {
  await db.deleteFrom('bot_pending_deletions').where('chat_id', '=', chatId).where('message_id', '=', messageId).execute();
}
