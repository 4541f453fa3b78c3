import { type Kysely, sql } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * Lithic's side of the core (src/core/provider/lithic-events/):
 * - `lithic_events`: every event Lithic delivered to `POST /provider/lithic/events`, once by its
 *   `webhook-id` (a replay finds its row). `status`: `received` until handled (a crash between leaves it so,
 *   and Lithic's retry handles it again), then `handled`, `unknown` (a type we do not handle: acknowledged and
 *   counted) or `review` (handled as far as the core allows: the operator should look, `note` says why).
 * - `lithic_transaction_events`: each event of a card transaction (Lithic's event token) applied once, whichever
 *   webhook carried it first: the same event arrives again in every later `card_transaction.updated`.
 * - `lithic_three_ds`: a 3-D Secure challenge Lithic asked us to put to the cardholder (its card_challenges row) and
 *   its Lithic token; `sent_at` once the cardholder's answer reached Lithic.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('lithic_events')
    .addColumn('webhook_id', 'text', (c) => c.primaryKey())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('received', 'handled', 'unknown', 'review')`))
    .addColumn('note', 'text')
    .addColumn('received_at', 'text', (c) => c.notNull())
    .addColumn('handled_at', 'text')
    .execute();
  await db.schema.createIndex('lithic_events_by_status').on('lithic_events').columns(['status', 'event_type']).execute();

  await db.schema
    .createTable('lithic_transaction_events')
    .addColumn('event_token', 'text', (c) => c.primaryKey())
    .addColumn('transaction_token', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('applied_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('lithic_three_ds')
    .addColumn('challenge_id', 'text', (c) => c.primaryKey().references('card_challenges.id'))
    .addColumn('three_ds_token', 'text', (c) => c.notNull().unique())
    .addColumn('sent_answer', 'text')
    .addColumn('sent_at', 'text')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('lithic_three_ds').execute();
  await db.schema.dropTable('lithic_transaction_events').execute();
  await db.schema.dropTable('lithic_events').execute();
}
