import type { BotDb } from './tables.js';

// The one-time nonces behind a flow's Confirm button (`bot_confirmations`): a second tap finds its nonce used.

export async function issueConfirmation(db: BotDb, nonce: string, chatId: number, at: Date): Promise<void> {
  await db.insertInto('bot_confirmations').values({ nonce, chat_id: chatId, created_at: at.toISOString(), used_at: null }).execute();
}

/** Whether the chat's confirmation under `nonce` has been used (a second tap on its Confirm). */
export async function confirmationUsed(db: BotDb, nonce: string, chatId: number): Promise<boolean> {
  const row = await db
    .selectFrom('bot_confirmations')
    .select('used_at')
    .where('nonce', '=', nonce)
    .where('chat_id', '=', chatId)
    .executeTakeFirst();
  return row?.used_at != null;
}

/** True for exactly one caller per nonce: the conditional update decides, not a read. */
export async function claimConfirmation(db: BotDb, nonce: string, chatId: number, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('bot_confirmations')
    .set({ used_at: at.toISOString() })
    .where('nonce', '=', nonce)
    .where('chat_id', '=', chatId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Drops the chat's confirmations not used yet (its link ended: nothing it showed may be confirmed). */
export async function dropOpenConfirmations(db: BotDb, chatId: number): Promise<void> {
  await db.deleteFrom('bot_confirmations').where('chat_id', '=', chatId).where('used_at', 'is', null).execute();
}

/** Forgets confirmations issued before `olderThan`, used or not: they outlive any conversation (idle ones expire). */
export async function pruneConfirmations(db: BotDb, olderThan: Date): Promise<void> {
  await db.deleteFrom('bot_confirmations').where('created_at', '<', olderThan.toISOString()).execute();
}
