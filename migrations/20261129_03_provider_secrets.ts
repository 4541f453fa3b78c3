import type { Kysely } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * `provider_secrets`: what a card provider gave the operator to verify its calls (Lithic's ASA and event
 * subscription secrets, stored by `provider lithic enroll`), by name. `value` is sealed with the card-data key,
 * bound to the name (src/core/keys/provider-secrets.ts), and re-sealed by every key rotation.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('provider_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value_encrypted', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('provider_secrets').execute();
}
