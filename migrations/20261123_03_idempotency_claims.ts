import type { Kysely } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * Idempotency claims that a crash cannot strand: a pending claim carries a token (the completion,
 * written in the operation's own transaction, must present it) and a lease after which another
 * request may take it over. Rows written before this migration have neither and keep their old
 * meaning (pending until they expire). An index by age bounds the keys kept per user.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('claim_token', 'text').execute();
  await db.schema.alterTable('idempotency_keys').addColumn('lease_until', 'text').execute();
  await db.schema
    .createIndex('idempotency_keys_by_user_age')
    .on('idempotency_keys')
    .columns(['user_id', 'created_at', 'idempotency_key'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('idempotency_keys_by_user_age').execute();
  await db.schema.alterTable('idempotency_keys').dropColumn('lease_until').execute();
  await db.schema.alterTable('idempotency_keys').dropColumn('claim_token').execute();
}
