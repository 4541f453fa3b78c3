import type { Kysely } from 'kysely';

// Frozen in time: the bot's own tables as they were on the day this was written.

export async function up(db: Kysely<any>): Promise<void> {
  // A private chat linked to a user through the hash of the API token it was linked with.
  await db.schema
    .createTable('bot_chat_links')
    .addColumn('chat_id', 'bigint', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('linked_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('bot_chat_links_user').on('bot_chat_links').column('user_id').execute();

  // Sessions and conversation state.
  await db.schema
    .createTable('bot_kv')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  // Messages to delete when due (sensitive details, OTPs), kept across restarts.
  await db.schema
    .createTable('bot_pending_deletions')
    .addColumn('chat_id', 'bigint', (c) => c.notNull())
    .addColumn('message_id', 'integer', (c) => c.notNull())
    .addColumn('due_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('bot_pending_deletions_pk', ['chat_id', 'message_id'])
    .execute();
  await db.schema.createIndex('bot_pending_deletions_due').on('bot_pending_deletions').column('due_at').execute();

  // Which outbox event reached which chat: an event is pushed to a chat at most once.
  await db.schema
    .createTable('bot_deliveries')
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('chat_id', 'bigint', (c) => c.notNull())
    .addColumn('delivered_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('bot_deliveries_pk', ['seq', 'chat_id'])
    .execute();

  // One-time confirmation nonces: a money-moving confirm runs only when it claims its nonce.
  await db.schema
    .createTable('bot_confirmations')
    .addColumn('nonce', 'text', (c) => c.primaryKey())
    .addColumn('chat_id', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('used_at', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['bot_confirmations', 'bot_deliveries', 'bot_pending_deletions', 'bot_kv', 'bot_chat_links']) {
    await db.schema.dropTable(table).execute();
  }
}
