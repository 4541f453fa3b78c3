import type { Kysely } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * One-time nonces of the card Details button when it opens the Mini App (src/bot/webapp-nonces.ts):
 * each is bound to a card, the Telegram user it was drawn for and the chat's link (its token's hash),
 * stored as a SHA-256 hash, and deleted when used; expired ones are purged by expiry.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webapp_nonces')
    .addColumn('nonce_hash', 'text', (c) => c.primaryKey())
    .addColumn('card_id', 'text', (c) => c.notNull())
    .addColumn('telegram_user_id', 'bigint', (c) => c.notNull())
    .addColumn('chat_id', 'bigint', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webapp_nonces_expiry').on('webapp_nonces').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('webapp_nonces_expiry').execute();
  await db.schema.dropTable('webapp_nonces').execute();
}
