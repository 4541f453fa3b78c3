import { type Kysely, sql } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * The webhook inbox (src/bot/runtime/inbox.ts): every update Telegram posts is stored before it is answered,
 * then handled by whichever process holds its chat's lease, one at a time and in update_id order.
 * A handled update stays a while as a tombstone (its payload emptied), so a delivery Telegram repeats
 * is recognised. A chat's lease row is written with its first update and kept.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('bot_updates')
    .addColumn('update_id', 'bigint', (c) => c.primaryKey())
    .addColumn('chat_key', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('received_at', 'text', (c) => c.notNull())
    .addColumn('handled_at', 'text')
    .execute();
  await db.schema
    .createIndex('bot_updates_pending')
    .on('bot_updates')
    .columns(['chat_key', 'update_id'])
    .where(sql.ref('handled_at'), 'is', null)
    .execute();
  await db.schema
    .createIndex('bot_updates_handled')
    .on('bot_updates')
    .column('handled_at')
    .where(sql.ref('handled_at'), 'is not', null)
    .execute();

  await db.schema
    .createTable('bot_chat_leases')
    .addColumn('chat_key', 'text', (c) => c.primaryKey())
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('bot_chat_leases').execute();
  await db.schema.dropIndex('bot_updates_handled').execute();
  await db.schema.dropIndex('bot_updates_pending').execute();
  await db.schema.dropTable('bot_updates').execute();
}
