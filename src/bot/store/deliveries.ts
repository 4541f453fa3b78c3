import type { BotDb } from './tables.js';

// Which chats an outbox event was pushed to (`bot_deliveries`), so a push taken over after a crash skips them.

export async function wasDelivered(db: BotDb, seq: number, chatId: number): Promise<boolean> {
  const row = await db.selectFrom('bot_deliveries').select('seq').where('seq', '=', seq).where('chat_id', '=', chatId).executeTakeFirst();
  return row !== undefined;
}

export async function recordDelivery(db: BotDb, seq: number, chatId: number, at: Date): Promise<void> {
  await db
    .insertInto('bot_deliveries')
    .values({ seq, chat_id: chatId, delivered_at: at.toISOString() })
    .onConflict((oc) => oc.columns(['seq', 'chat_id']).doNothing())
    .execute();
}

/** Forgets deliveries recorded before `olderThan`: an event's are read only until it is marked delivered. */
export async function pruneDeliveries(db: BotDb, olderThan: Date): Promise<void> {
  await db.deleteFrom('bot_deliveries').where('delivered_at', '<', olderThan.toISOString()).execute();
}
