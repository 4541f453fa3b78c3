import type { Kysely } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

export async function up(db: Kysely<any>): Promise<void> {
  // What an operator sees of a token without its plaintext: a short prefix, and when it was last used.
  await db.schema.alterTable('api_tokens').addColumn('prefix', 'text').execute();
  await db.schema.alterTable('api_tokens').addColumn('last_used_at', 'text').execute();
  await db.schema.createIndex('api_tokens_by_user').on('api_tokens').columns(['user_id', 'created_at']).execute();

  // Things a chat must be told once, whatever process caused them (a revocation from the command line).
  await db.schema
    .createTable('bot_notices')
    .addColumn('chat_id', 'bigint', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('locale', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('bot_notices_pk', ['chat_id', 'kind'])
    .execute();

  // OTP codes and outbox rows are purged by age.
  await db.schema.createIndex('card_otps_by_created').on('card_otps').column('created_at').execute();
  await db.schema.createIndex('outbox_by_created').on('outbox').column('created_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('outbox_by_created').execute();
  await db.schema.dropIndex('card_otps_by_created').execute();
  await db.schema.dropTable('bot_notices').execute();
  await db.schema.dropIndex('api_tokens_by_user').execute();
  await db.schema.alterTable('api_tokens').dropColumn('last_used_at').execute();
  await db.schema.alterTable('api_tokens').dropColumn('prefix').execute();
}
