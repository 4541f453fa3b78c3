import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * Every page of a card's statement as a range search: a page skipping lines by OFFSET still visited
 * them in the index, about 2,500 on the middle page of a 5,000-line card (`bench/data.bench.ts`). Each
 * line gets its place in its card's statement (`card_position`, 1, 2, … per user and card, in the
 * order written), and the counts row remembers the last place given (`last_position`), which never
 * goes down: a deleted line leaves a gap and its place is never given again. While a card's count
 * equals its last position its statement has no gap, and page p of n lines holds positions known in
 * advance.
 *
 * Who stamps the position:
 * - Postgres: a BEFORE INSERT trigger takes it from the upsert of the counts row, whose row lock makes
 *   concurrent writers to one card take turns (it replaces the AFTER INSERT counting trigger).
 * - SQLite: triggers cannot change NEW. There is one writer at a time, so the insert computes the
 *   position itself from the counts row (src/core/operations/card-records.ts), and the AFTER INSERT trigger moves
 *   `last_position` up to it.
 *
 * The unique index (user_id, card_id, card_position) replaces (user_id, card_id, seq): every read of a
 * card's lines names the user and now orders by position; a top-up writes one index fewer than it
 * would keep both. Counts are kept per user and card, and a line never changes either, so positions
 * are unique per card.
 */
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  // SQLite adds a NOT NULL column only with a default; 0 is no position (positions start at 1).
  await db.schema
    .alterTable('card_transactions')
    .addColumn('card_position', 'integer', (c) => (postgres ? c : c.notNull().defaultTo(0)))
    .execute();
  await db.schema
    .alterTable('card_transaction_counts')
    .addColumn('last_position', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await sql`
    update card_transactions set card_position = numbered.position
    from (select seq, row_number() over (partition by user_id, card_id order by seq) as position from card_transactions) as numbered
    where card_transactions.seq = numbered.seq
  `.execute(db);
  if (postgres) await sql`alter table card_transactions alter column card_position set not null`.execute(db);
  await db.schema
    .createIndex('card_transactions_by_card_position')
    .on('card_transactions')
    .columns(['user_id', 'card_id', 'card_position'])
    .unique()
    .execute();
  await sql`
    update card_transaction_counts set last_position = lines.last
    from (select user_id, card_id, max(card_position) as last from card_transactions group by user_id, card_id) as lines
    where card_transaction_counts.user_id = lines.user_id and card_transaction_counts.card_id = lines.card_id
  `.execute(db);
  await db.schema.dropIndex('card_transactions_by_user_card').execute();

  if (postgres) {
    await sql`
      create function card_transactions_position() returns trigger language plpgsql as $$
      begin
        insert into card_transaction_counts as counts (user_id, card_id, transactions, last_position)
        values (new.user_id, new.card_id, 1, 1)
        on conflict (user_id, card_id) do update
        set transactions = counts.transactions + 1, last_position = counts.last_position + 1
        returning counts.last_position into new.card_position;
        return new;
      end
      $$
    `.execute(db);
    await sql`drop trigger card_transactions_counted on card_transactions`.execute(db);
    await sql`
      create trigger card_transactions_positioned before insert on card_transactions
      for each row execute function card_transactions_position()
    `.execute(db);
    // card_transactions_count() (20261124_02) still counts a deletion; it no longer sees inserts.
    await sql`
      create trigger card_transactions_counted after delete on card_transactions
      for each row execute function card_transactions_count()
    `.execute(db);
  } else {
    await sql`drop trigger card_transactions_counted`.execute(db);
    await sql`
      create trigger card_transactions_counted after insert on card_transactions
      begin
        insert into card_transaction_counts (user_id, card_id, transactions, last_position)
        values (new.user_id, new.card_id, 1, new.card_position)
        on conflict (user_id, card_id) do update
        set transactions = transactions + 1, last_position = max(last_position, excluded.last_position);
      end
    `.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop trigger card_transactions_counted on card_transactions`.execute(db);
    await sql`drop trigger card_transactions_positioned on card_transactions`.execute(db);
    await sql`drop function card_transactions_position()`.execute(db);
    await sql`
      create trigger card_transactions_counted after insert or delete on card_transactions
      for each row execute function card_transactions_count()
    `.execute(db);
  } else {
    await sql`drop trigger card_transactions_counted`.execute(db);
    await sql`
      create trigger card_transactions_counted after insert on card_transactions
      begin
        insert into card_transaction_counts (user_id, card_id, transactions) values (new.user_id, new.card_id, 1)
        on conflict (user_id, card_id) do update set transactions = transactions + 1;
      end
    `.execute(db);
  }
  await db.schema.createIndex('card_transactions_by_user_card').on('card_transactions').columns(['user_id', 'card_id', 'seq']).execute();
  await db.schema.dropIndex('card_transactions_by_card_position').execute();
  await db.schema.alterTable('card_transaction_counts').dropColumn('last_position').execute();
  await db.schema.alterTable('card_transactions').dropColumn('card_position').execute();
}
