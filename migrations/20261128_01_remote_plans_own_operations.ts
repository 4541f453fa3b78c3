import { type Kysely, sql } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * Remote mode, second round (src/remote/known-cards.ts):
 * - `bot_remote_cards` keeps what the bot knows of a card's plan, which the interface's card record does not
 *   carry: `plan_id` and `limit_cents` when the bot created the card (or learnt the limit from a refusal),
 *   and `creation_fee` the fee the service took for it (the wallet before and after), for the "being
 *   issued" note. All nullable: unknown for a card the bot did not create. `withdrawal_attempted_at`: when
 *   the bot last sent a withdrawal or close of the card that the service counted (not one it refused for
 *   the cooldown), so Withdraw and Close tell the cooldown's wait before Confirm.
 * - `bot_remote_own_operations`: a top-up, withdrawal or close the bot is making on a card, written before
 *   its request is sent and deleted when its answer came back (its transaction then marked seen), so that
 *   the watcher does not push the user's own operation back as an alert, whichever instance polls. `side`:
 *   the side its transaction has on the card; `hold_until`: when the row no longer holds anything back (an
 *   instance stopped mid-request).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('bot_remote_cards').addColumn('plan_id', 'integer').execute();
  await db.schema.alterTable('bot_remote_cards').addColumn('limit_cents', 'bigint').execute();
  await db.schema.alterTable('bot_remote_cards').addColumn('creation_fee', 'bigint').execute();
  await db.schema.alterTable('bot_remote_cards').addColumn('withdrawal_attempted_at', 'text').execute();

  await db.schema
    .createTable('bot_remote_own_operations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('card_id', 'text', (c) => c.notNull())
    .addColumn('side', 'text', (c) => c.notNull().check(sql`side in ('Credit', 'Debit')`))
    .addColumn('hold_until', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('bot_remote_own_operations_card').on('bot_remote_own_operations').columns(['user_id', 'card_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('bot_remote_own_operations').execute();
  for (const column of ['withdrawal_attempted_at', 'creation_fee', 'limit_cents', 'plan_id'])
    await db.schema.alterTable('bot_remote_cards').dropColumn(column).execute();
}
