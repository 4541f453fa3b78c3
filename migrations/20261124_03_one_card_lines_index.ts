import type { Kysely } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * Every read of statement lines names the user (ownership), so `card_transactions_by_user_card`
 * (user_id, card_id, seq) serves every card page and `card_transactions_by_card` (card_id, seq) serves
 * nothing; cards are never deleted, so no foreign-key check needs it either. Each top-up wrote it all the
 * same: one more index page per card in every commit.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('card_transactions_by_card').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('card_transactions_by_card').on('card_transactions').columns(['card_id', 'seq']).execute();
}
