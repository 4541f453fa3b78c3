import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * A statement's length without counting it (spec 4.12's `pagination.total`): counting a card's lines
 * visited every one of them, thousands on a busy card (`bench/data.bench.ts`). The database keeps a
 * count per user and card, moved by triggers in the transaction that writes or deletes a line, so no
 * code path can forget it; a user's total is the sum over their cards. Lines never change card or user.
 * The index by user and card lets a page skip the lines before it in the index alone.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('card_transaction_counts')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('card_id', 'text', (c) => c.notNull().references('cards.id'))
    .addColumn('transactions', 'bigint', (c) => c.notNull().check(sql`transactions >= 0`))
    .addPrimaryKeyConstraint('card_transaction_counts_pk', ['user_id', 'card_id'])
    .execute();
  await sql`
    insert into card_transaction_counts (user_id, card_id, transactions)
    select user_id, card_id, count(*) from card_transactions group by user_id, card_id
  `.execute(db);

  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`
      create function card_transactions_count() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          insert into card_transaction_counts (user_id, card_id, transactions) values (new.user_id, new.card_id, 1)
          on conflict (user_id, card_id) do update set transactions = card_transaction_counts.transactions + 1;
        else
          update card_transaction_counts set transactions = transactions - 1 where user_id = old.user_id and card_id = old.card_id;
        end if;
        return null;
      end
      $$
    `.execute(db);
    await sql`
      create trigger card_transactions_counted after insert or delete on card_transactions
      for each row execute function card_transactions_count()
    `.execute(db);
  } else {
    await sql`
      create trigger card_transactions_counted after insert on card_transactions
      begin
        insert into card_transaction_counts (user_id, card_id, transactions) values (new.user_id, new.card_id, 1)
        on conflict (user_id, card_id) do update set transactions = transactions + 1;
      end
    `.execute(db);
    await sql`
      create trigger card_transactions_uncounted after delete on card_transactions
      begin
        update card_transaction_counts set transactions = transactions - 1 where user_id = old.user_id and card_id = old.card_id;
      end
    `.execute(db);
  }

  await db.schema.createIndex('card_transactions_by_user_card').on('card_transactions').columns(['user_id', 'card_id', 'seq']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('card_transactions_by_user_card').execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`drop trigger card_transactions_counted on card_transactions`.execute(db);
    await sql`drop function card_transactions_count()`.execute(db);
  } else {
    await sql`drop trigger card_transactions_uncounted`.execute(db);
    await sql`drop trigger card_transactions_counted`.execute(db);
  }
  await db.schema.dropTable('card_transaction_counts').execute();
}
