import { type Kysely, sql } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * The fingerprints of the card-data keys (never the keys): the current one, which a start must be
 * given, and those retired by a rotation. At most one is current.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('card_data_keys')
    .addColumn('fingerprint', 'text', (c) => c.primaryKey())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('current', 'retired')`))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('retired_at', 'text')
    .addCheckConstraint('card_data_keys_retired_at_when_retired', sql`(state = 'retired') = (retired_at is not null)`)
    .execute();
  await db.schema
    .createIndex('card_data_keys_one_current')
    .on('card_data_keys')
    .column('state')
    .unique()
    .where(sql.ref('state'), '=', 'current')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('card_data_keys').execute();
}
