import type { Kysely } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/** The queues the bot's background loops work through, each row claimable by one process at a time. */
const QUEUES = ['outbox', 'bot_pending_deletions', 'bot_notices'] as const;

/**
 * Several bot processes on one database: a loop claims the rows it works on for a while (a lease) by
 * writing who it is and until when; another process takes only unclaimed rows or rows whose lease
 * lapsed (their holder died). Rows written before this migration are unclaimed. The outbox and the
 * deletions are claimed in the order of indexes they already have (`outbox_pending`,
 * `bot_pending_deletions_due`); the notices get one by age.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of QUEUES) {
    await db.schema.alterTable(table).addColumn('claimed_by', 'text').execute();
    await db.schema.alterTable(table).addColumn('claimed_until', 'text').execute();
  }
  await db.schema.createIndex('bot_notices_by_created').on('bot_notices').columns(['created_at', 'chat_id', 'kind']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('bot_notices_by_created').execute();
  for (const table of QUEUES) {
    await db.schema.alterTable(table).dropColumn('claimed_until').execute();
    await db.schema.alterTable(table).dropColumn('claimed_by').execute();
  }
}
