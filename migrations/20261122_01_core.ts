import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

type Builder = ReturnType<Kysely<any>['schema']['createTable']>;

function withSerial(db: Kysely<any>, table: Builder, column: string): Builder {
  return db.getExecutor().adapter instanceof PostgresAdapter
    ? table.addColumn(column, 'serial', (c) => c.primaryKey())
    : table.addColumn(column, 'integer', (c) => c.primaryKey().autoIncrement());
}

export async function up(db: Kysely<any>): Promise<void> {
  await withSerial(db, db.schema.createTable('accounts'), 'id')
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('wallet', 'card', 'system')`))
    .addColumn('code', 'text', (c) => c.unique())
    .addColumn('balance', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addCheckConstraint('accounts_no_negative_user_balance', sql`kind = 'system' or balance >= 0`)
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('wallet_account_id', 'integer', (c) => c.notNull().unique().references('accounts.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('revoked_at', 'text')
    .execute();

  await withSerial(db, db.schema.createTable('journals'), 'id')
    .addColumn('reference', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await withSerial(db, db.schema.createTable('entries'), 'id')
    .addColumn('journal_id', 'integer', (c) => c.notNull().references('journals.id'))
    .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id'))
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount <> 0`))
    .execute();
  await db.schema.createIndex('entries_by_account').on('entries').column('account_id').execute();
  await db.schema.createIndex('entries_by_journal').on('entries').column('journal_id').execute();

  await db.schema
    .createTable('bins')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('bin', 'text', (c) => c.notNull().check(sql`length(bin) = 6`))
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('three_ds', 'integer', (c) => c.notNull())
    .addColumn('wallet', 'integer', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('country', 'text', (c) => c.notNull())
    .addColumn('initial_balance', 'bigint', (c) => c.notNull().check(sql`initial_balance >= 0`))
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await withSerial(db, db.schema.createTable('plans'), 'id')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('limit_amount', 'bigint', (c) => c.notNull().check(sql`limit_amount > 0`))
    .addColumn('creation_fee', 'bigint', (c) => c.notNull().check(sql`creation_fee >= 0`))
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('platform_fees')
    .addColumn('category', 'text', (c) => c.primaryKey())
    .addColumn('percent_bps', 'integer', (c) => c.notNull().check(sql`percent_bps >= 0 and percent_bps <= 10000`))
    .addColumn('fixed_amount', 'bigint', (c) => c.notNull().check(sql`fixed_amount >= 0`))
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('coupons')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('percent', 'amount')`))
    .addColumn('value', 'bigint', (c) => c.notNull().check(sql`value > 0`))
    .addColumn('expires_at', 'text')
    .addColumn('max_redemptions', 'integer')
    .addColumn('redemptions', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addCheckConstraint('coupons_redemptions_within_limit', sql`max_redemptions is null or redemptions <= max_redemptions`)
    .execute();

  await withSerial(db, db.schema.createTable('cards'), 'number')
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('account_id', 'integer', (c) => c.notNull().unique().references('accounts.id'))
    .addColumn('bin_id', 'text', (c) => c.notNull().references('bins.id'))
    .addColumn('plan_id', 'integer', (c) => c.notNull().references('plans.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('category', 'text', (c) => c.notNull().check(sql`category in ('Wallet', 'Online')`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'frozen', 'closed')`))
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('three_ds', 'integer', (c) => c.notNull())
    .addColumn('masked_pan', 'text', (c) => c.notNull())
    .addColumn('pan_encrypted', 'text', (c) => c.notNull())
    .addColumn('cvv_encrypted', 'text', (c) => c.notNull())
    .addColumn('exp', 'text', (c) => c.notNull())
    .addColumn('provider_card_id', 'text', (c) => c.notNull().unique())
    .addColumn('provider_ready', 'integer', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('limit_amount', 'bigint', (c) => c.notNull())
    .addColumn('deposit', 'bigint', (c) => c.notNull())
    .addColumn('last_topup_attempt_at', 'text')
    .addColumn('last_withdraw_attempt_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addCheckConstraint('cards_deposit_within_limit', sql`deposit >= 0 and deposit <= limit_amount`)
    .execute();
  await db.schema.createIndex('cards_by_user').on('cards').columns(['user_id', 'number']).execute();

  await withSerial(db, db.schema.createTable('card_transactions'), 'seq')
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('card_id', 'text', (c) => c.notNull().references('cards.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('journal_id', 'integer', (c) => c.references('journals.id'))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('Approved', 'Declined')`))
    .addColumn('side', 'text', (c) => c.notNull().check(sql`side in ('Debit', 'Credit')`))
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount >= 0`))
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('merchant_name', 'text', (c) => c.notNull())
    .addColumn('original_amount', 'bigint', (c) => c.notNull())
    .addColumn('original_currency', 'text', (c) => c.notNull())
    .addColumn('decline_code', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('card_transactions_by_user').on('card_transactions').columns(['user_id', 'seq']).execute();
  await db.schema.createIndex('card_transactions_by_card').on('card_transactions').columns(['card_id', 'seq']).execute();

  await withSerial(db, db.schema.createTable('card_otps'), 'seq')
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('card_id', 'text', (c) => c.notNull().references('cards.id'))
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('merchant_name', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull().check(sql`source in ('push', 'email')`))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('card_otps_by_card').on('card_otps').columns(['card_id', 'seq']).execute();

  await withSerial(db, db.schema.createTable('sandbox_mailbox'), 'id')
    .addColumn('provider_card_id', 'text', (c) => c.notNull())
    .addColumn('code', 'text', (c) => c.notNull())
    .addColumn('received_at', 'text', (c) => c.notNull())
    .addColumn('taken_at', 'text')
    .execute();

  await withSerial(db, db.schema.createTable('outbox'), 'seq')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('delivered_at', 'text')
    .execute();
  await db.schema.createIndex('outbox_pending').on('outbox').columns(['delivered_at', 'seq']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'outbox',
    'sandbox_mailbox',
    'card_otps',
    'card_transactions',
    'cards',
    'coupons',
    'platform_fees',
    'plans',
    'bins',
    'entries',
    'journals',
    'api_tokens',
    'users',
    'accounts',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
