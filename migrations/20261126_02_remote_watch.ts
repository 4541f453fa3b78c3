import { type Kysely, sql } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * Remote mode's pushes without events (src/remote/watch.ts): the bot polls the card service for what is
 * new and records it in the outbox once.
 * - `bot_remote_cards`: the cards the bot knows of each remote user (those it created, those seen in the
 *   user's transactions, those added by id), polled for new OTPs. `watch_until` set: watched closely
 *   until then ("waiting for a code"). `last_polled_at`: when an instance last took the card's OTP list,
 *   set as it starts (a claim, so instances share the polling). `baselined_at`: set by the first poll,
 *   which takes what the card already had as history, not news.
 * - `bot_remote_users`: the same two times for each user's first page of transactions.
 * - `bot_remote_seen`: items already pushed (or taken as history), by remote id; an item is recorded in
 *   the outbox by whoever inserts its row here, in the same transaction.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('bot_remote_cards')
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('card_id', 'text', (c) => c.notNull())
    .addColumn('added_at', 'text', (c) => c.notNull())
    .addColumn('watch_until', 'text')
    .addColumn('last_polled_at', 'text')
    .addColumn('baselined_at', 'text')
    .addPrimaryKeyConstraint('bot_remote_cards_pk', ['user_id', 'card_id'])
    .execute();
  await db.schema.createIndex('bot_remote_cards_watch').on('bot_remote_cards').column('watch_until').execute();

  await db.schema
    .createTable('bot_remote_users')
    .addColumn('user_id', 'text', (c) => c.primaryKey())
    .addColumn('last_polled_at', 'text')
    .addColumn('baselined_at', 'text')
    .execute();

  await db.schema
    .createTable('bot_remote_seen')
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('otp', 'transaction')`))
    .addColumn('item_id', 'text', (c) => c.notNull())
    .addColumn('seen_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('bot_remote_seen_pk', ['user_id', 'kind', 'item_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['bot_remote_seen', 'bot_remote_users', 'bot_remote_cards']) await db.schema.dropTable(table).execute();
}
