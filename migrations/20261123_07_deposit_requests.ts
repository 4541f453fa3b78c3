import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * Money in from chat (src/core/funding/deposits.ts, src/core/funding/payments.ts):
 * - `deposit_requests`: a cardholder asks for an amount to be credited; an admin approves (the wallet is
 *   credited by the journal `journal_id`, written in the transaction that decides) or rejects with a reason.
 * - `wallet_invoices`: the intended credit a Telegram Payments invoice names in its payload.
 * - `wallet_payments`: each charge Telegram reported, keyed by its charge id, so a repeated
 *   `successful_payment` credits nothing.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const requests = db.schema.createTable('deposit_requests');
  await (postgres
    ? requests.addColumn('id', 'serial', (c) => c.primaryKey())
    : requests.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
  )
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('note', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'approved', 'rejected')`))
    .addColumn('decided_by', 'text')
    .addColumn('decided_at', 'text')
    .addColumn('reason', 'text')
    .addColumn('journal_id', 'integer', (c) => c.references('journals.id'))
    .addColumn('chat_id', 'bigint')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addCheckConstraint(
      'deposit_requests_decided',
      sql`(status = 'pending' and decided_at is null) or (status <> 'pending' and decided_at is not null and decided_by is not null)`,
    )
    .addCheckConstraint('deposit_requests_rejected_with_reason', sql`status <> 'rejected' or reason is not null`)
    .execute();
  await db.schema.createIndex('deposit_requests_by_status').on('deposit_requests').columns(['status', 'id']).execute();
  await db.schema.createIndex('deposit_requests_by_user').on('deposit_requests').columns(['user_id', 'status']).execute();

  await db.schema
    .createTable('wallet_invoices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('chat_id', 'bigint', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('paid_at', 'text')
    .execute();

  await db.schema
    .createTable('wallet_payments')
    .addColumn('telegram_payment_charge_id', 'text', (c) => c.primaryKey())
    .addColumn('provider_payment_charge_id', 'text', (c) => c.notNull())
    .addColumn('invoice_id', 'text', (c) => c.notNull().references('wallet_invoices.id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('journal_id', 'integer', (c) => c.references('journals.id'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('wallet_payments').execute();
  await db.schema.dropTable('wallet_invoices').execute();
  await db.schema.dropIndex('deposit_requests_by_user').execute();
  await db.schema.dropIndex('deposit_requests_by_status').execute();
  await db.schema.dropTable('deposit_requests').execute();
}
