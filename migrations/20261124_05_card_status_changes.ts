import type { Kysely } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * One freeze or unfreeze of a card at a time (src/core/operations/cards.ts): while one waits on the provider,
 * `status_change_until` says until when it holds the card (a process that died holding it frees the card
 * then). Without it two changes could reach the provider in one order and the database in the other,
 * leaving a card frozen here and usable at the provider.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('cards').addColumn('status_change_until', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('cards').dropColumn('status_change_until').execute();
}
