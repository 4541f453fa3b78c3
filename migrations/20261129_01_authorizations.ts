import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * Every purchase decided by the core (src/core/authorization/):
 * - `cards` carries its type (`multi_use`, `single_use`, `merchant_locked`), the merchant a merchant-locked
 *   card is locked to (its first), the cardholder's spending controls (cents, null for none; blocked
 *   merchant-category groups as a JSON array of their names) and its auto top-up (the interface's earlier
 *   `auto_topup`: enabled, min_balance, topup_amount, last_triggered).
 * - `card_authorizations`: one row per authorization the provider asked about, approved or declined, found
 *   again by the provider's transaction id (unique: an approval asked twice is answered once). Its statement
 *   line has the same id. `amount` is what was asked and held; `cleared_amount` what the clearing took.
 * - `card_challenges`: purchase approvals asked in chat (3-D Secure out of band), answered once.
 * - `card_transactions.status` may be `Reversed`: an authorization voided or expired, its hold released.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const cards = () => db.schema.alterTable('cards');
  await cards()
    .addColumn('type', 'text', (c) => c.notNull().defaultTo('multi_use').check(sql`type in ('multi_use', 'single_use', 'merchant_locked')`))
    .execute();
  await cards().addColumn('locked_merchant', 'text').execute();
  await cards()
    .addColumn('per_purchase_limit', 'bigint', (c) => c.check(sql`per_purchase_limit > 0`))
    .execute();
  await cards()
    .addColumn('daily_limit', 'bigint', (c) => c.check(sql`daily_limit > 0`))
    .execute();
  await cards()
    .addColumn('monthly_limit', 'bigint', (c) => c.check(sql`monthly_limit > 0`))
    .execute();
  await cards()
    .addColumn('blocked_categories', 'text', (c) => c.notNull().defaultTo('[]'))
    .execute();
  await cards()
    .addColumn('auto_topup_enabled', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await cards()
    .addColumn('auto_topup_min_balance', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await cards()
    .addColumn('auto_topup_amount', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await cards().addColumn('auto_topup_last_triggered', 'text').execute();

  await db.schema
    .createTable('card_authorizations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('provider_transaction_id', 'text', (c) => c.notNull().unique())
    .addColumn('card_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'cleared', 'voided', 'expired', 'declined')`))
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('cleared_amount', 'bigint', (c) => c.check(sql`cleared_amount >= 0`))
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('merchant_name', 'text', (c) => c.notNull())
    .addColumn('merchant_mcc', 'text', (c) => c.notNull())
    .addColumn('merchant_country', 'text', (c) => c.notNull())
    .addColumn('decline_code', 'text')
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('card_authorizations_card').on('card_authorizations').columns(['card_id', 'created_at']).execute();
  await db.schema.createIndex('card_authorizations_expiry').on('card_authorizations').columns(['status', 'expires_at']).execute();

  await db.schema
    .createTable('card_challenges')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('card_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount >= 0`))
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('merchant_name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'approved', 'declined', 'expired')`))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('answered_at', 'text')
    .execute();
  await db.schema.createIndex('card_challenges_card').on('card_challenges').columns(['card_id', 'created_at']).execute();

  await setStatuses(db, ['Approved', 'Declined', 'Pending', 'Reversed'], 'Approved');
}

/** Fails while a line is `Reversed`: those lines would have no status of the older schema. */
export async function down(db: Kysely<any>): Promise<void> {
  await setStatuses(db, ['Approved', 'Declined', 'Pending'], 'Approved');
  await db.schema.dropTable('card_challenges').execute();
  await db.schema.dropTable('card_authorizations').execute();
  for (const column of [
    'auto_topup_last_triggered',
    'auto_topup_amount',
    'auto_topup_min_balance',
    'auto_topup_enabled',
    'blocked_categories',
    'monthly_limit',
    'daily_limit',
    'per_purchase_limit',
    'locked_merchant',
    'type',
  ])
    await db.schema.alterTable('cards').dropColumn(column).execute();
}

/** As migrations/20261126_01_holds_shown.ts widens a status CHECK: Postgres replaces it, SQLite replaces the column. */
async function setStatuses(db: Kysely<any>, values: readonly string[], fill: string): Promise<void> {
  const allowed = sql.join(values.map((v) => sql.lit(v)));
  const table = 'card_transactions';
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table ${sql.table(table)} drop constraint ${sql.id(`${table}_status_check`)}`.execute(db);
    await sql`alter table ${sql.table(table)} add constraint ${sql.id(`${table}_status_check`)} check (status in (${allowed}))`.execute(db);
    return;
  }
  await sql`
    alter table ${sql.table(table)} add column status_widened text not null default ${sql.lit(fill)}
    check (status_widened in (${allowed}))
  `.execute(db);
  await sql`update ${sql.table(table)} set status_widened = status`.execute(db);
  await sql`alter table ${sql.table(table)} drop column status`.execute(db);
  await sql`alter table ${sql.table(table)} rename column status_widened to status`.execute(db);
}
