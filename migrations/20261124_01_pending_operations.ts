import { type Kysely, sql } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * Card-provider calls leave the database transaction (src/core/operations/pending-operations.ts): an operation that
 * calls the provider first records what it holds here (a withdrawal's amount, a creation's fee, taken
 * into the in-flight system account by the journal `hold_journal_id`; nothing for a closure), commits,
 * calls the provider, then settles and deletes its row in a second transaction. A row left behind by a
 * crash is settled once by whoever deletes it first (the operation, or a recovery: at start, in
 * housekeeping, or first thing in the same user's next withdrawal, closure or creation).
 * - `card_id`: the card operated on; for a creation the id the new card will have (no foreign key: the
 *   card does not exist yet).
 * - `account_id`: the account the amount was held from (the card's, or the wallet for a fee).
 * - `coupon_id`: the coupon a creation redeemed, given back when the creation fails.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('pending_operations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('withdraw', 'close', 'create_card')`))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('card_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'integer', (c) => c.references('accounts.id'))
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount >= 0`))
    .addColumn('hold_journal_id', 'integer', (c) => c.references('journals.id'))
    .addColumn('coupon_id', 'text', (c) => c.references('coupons.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addCheckConstraint(
      'pending_operations_hold',
      sql`(amount = 0 and hold_journal_id is null) or (account_id is not null and hold_journal_id is not null)`,
    )
    .execute();
  await db.schema.createIndex('pending_operations_by_age').on('pending_operations').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('pending_operations_by_card').on('pending_operations').columns(['card_id', 'kind']).execute();
  await db.schema.createIndex('pending_operations_by_user').on('pending_operations').columns(['user_id', 'created_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('pending_operations_by_user').execute();
  await db.schema.dropIndex('pending_operations_by_card').execute();
  await db.schema.dropIndex('pending_operations_by_age').execute();
  await db.schema.dropTable('pending_operations').execute();
}
