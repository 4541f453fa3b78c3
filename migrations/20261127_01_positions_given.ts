import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * A statement line whose position its writer took itself (`position_given`): on Postgres the BEFORE INSERT
 * trigger of migrations/20261124_04_card_positions.ts stamps a line's position with a PL/pgSQL upsert of the
 * card's counts row, a third of a top-up statement's execution (docs/performance.md). The top-up statement
 * now makes that same upsert itself, in a CTE under the same row lock, gives the line the position it
 * returned and marks it; the trigger fires only for lines not so marked. Every other writer, and every
 * writer of an older release still running during a rolling restart, marks nothing and keeps the trigger.
 * Nullable, with no default: adding it rewrites no row. SQLite has the column too (one schema), unused
 * there: its one writer computes positions itself.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('card_transactions').addColumn('position_given', 'boolean').execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop trigger card_transactions_positioned on card_transactions`.execute(db);
    await sql`
      create trigger card_transactions_positioned before insert on card_transactions
      for each row when (new.position_given is not true) execute function card_transactions_position()
    `.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop trigger card_transactions_positioned on card_transactions`.execute(db);
    await sql`
      create trigger card_transactions_positioned before insert on card_transactions
      for each row execute function card_transactions_position()
    `.execute(db);
  }
  await db.schema.alterTable('card_transactions').dropColumn('position_given').execute();
}
