import { type Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * Nothing held is invisible (src/core/operations/pending-operations.ts): while an operation waits on the card
 * provider, what it holds shows.
 * - `cards.status` may be `processing`: a card being issued, written by the creation's first transaction
 *   with its fee held from the wallet, made `active` once the provider has issued it, removed when the
 *   creation is released.
 * - `card_transactions.status` may be `Pending`: a withdrawal's or closure's line, written with the hold,
 *   turned `Approved` when the operation settles, removed when it is released.
 *
 * Each widens a column CHECK. Postgres replaces the constraint. SQLite cannot change a constraint, so
 * the column is replaced by a new one carrying the wider CHECK (added, copied, the old one dropped, the
 * new one renamed); SQLite's ADD COLUMN wants a default for NOT NULL, which the new column keeps.
 */
const WIDENED = [
  { table: 'cards', values: ['processing', 'active', 'frozen', 'closed'], was: ['active', 'frozen', 'closed'], fill: 'active' },
  {
    table: 'card_transactions',
    values: ['Approved', 'Declined', 'Pending'],
    was: ['Approved', 'Declined'],
    fill: 'Approved',
  },
] as const;

async function setStatuses(db: Kysely<any>, table: string, values: readonly string[], fill: string): Promise<void> {
  const allowed = sql.join(values.map((v) => sql.lit(v)));
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table ${sql.table(table)} drop constraint ${sql.id(`${table}_status_check`)}`.execute(db);
    await sql`alter table ${sql.table(table)} add constraint ${sql.id(`${table}_status_check`)} check (status in (${allowed}))`.execute(db);
    return;
  }
  await sql`
    alter table ${sql.table(table)} add column status_widened text not null default ${sql.lit(fill)}
    check (status_widened in (${allowed}))
  `.execute(db);
  await sql`update ${sql.table(table)} set status_widened = status`.execute(db);
  await sql`alter table ${sql.table(table)} drop column status`.execute(db);
  await sql`alter table ${sql.table(table)} rename column status_widened to status`.execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  for (const { table, values, fill } of WIDENED) await setStatuses(db, table, values, fill);
}

/** Fails while a card is `processing` or a line `Pending` (an operation under way): settle them first. */
export async function down(db: Kysely<any>): Promise<void> {
  for (const { table, was, fill } of WIDENED) await setStatuses(db, table, was, fill);
}
