import type { BotDb } from './tables.js';

// `bot_deliveries` for many events at once: a push that merges many events (an OTP flood) into one message
// records them in one statement, not one each.

/** Rows in one statement at most (SQLite's bound parameters, three a row). */
const ROWS_AT_ONCE = 300;

/** Which of the events `seqs` were pushed to `chatId` already. */
export async function deliveredTo(db: BotDb, seqs: readonly number[], chatId: number): Promise<Set<number>> {
  const delivered = new Set<number>();
  for (let i = 0; i < seqs.length; i += ROWS_AT_ONCE) {
    const rows = await db
      .selectFrom('bot_deliveries')
      .select('seq')
      .where('chat_id', '=', chatId)
      .where('seq', 'in', seqs.slice(i, i + ROWS_AT_ONCE))
      .execute();
    for (const row of rows) delivered.add(Number(row.seq));
  }
  return delivered;
}

/** Records that the events `seqs` were pushed to `chatId` (again is fine). */
export async function recordDeliveries(db: BotDb, seqs: readonly number[], chatId: number, at: Date): Promise<void> {
  const deliveredAt = at.toISOString();
  for (let i = 0; i < seqs.length; i += ROWS_AT_ONCE) {
    await db
      .insertInto('bot_deliveries')
      .values(seqs.slice(i, i + ROWS_AT_ONCE).map((seq) => ({ seq, chat_id: chatId, delivered_at: deliveredAt })))
      .onConflict((oc) => oc.columns(['seq', 'chat_id']).doNothing())
      .execute();
  }
}
