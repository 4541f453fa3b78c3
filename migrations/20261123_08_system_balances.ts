import type { Kysely } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * System accounts (revenue, deposits, merchants, initial balances) keep no balance of their own from now on:
 * their entries are their balance (src/core/ledger/ledger.ts, `Posting.system`). Their rows, which every fee,
 * deposit and purchase used to move, were one lock that all such operations queued behind on Postgres. The
 * balance they had cached is zeroed so that it cannot be read as current; `ledger check` sums their entries.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.updateTable('accounts').set({ balance: 0 }).where('kind', '=', 'system').execute();
}

/** Back to a maintained balance: each system account's cached balance is its entries' sum again. */
export async function down(db: Kysely<any>): Promise<void> {
  const sums = await db
    .selectFrom('entries')
    .innerJoin('accounts', 'accounts.id', 'entries.account_id')
    .where('accounts.kind', '=', 'system')
    .select((eb) => ['entries.account_id as id', eb.fn.sum<number>('entries.amount').as('total')])
    .groupBy('entries.account_id')
    .execute();
  for (const { id, total } of sums)
    await db
      .updateTable('accounts')
      .set({ balance: Number(total) })
      .where('id', '=', id)
      .execute();
}
