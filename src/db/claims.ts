import { randomUUID } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import type { Clock } from '../infra/clock.js';
import { freeAt, heldAs, type LeaseExecutor, takeMany } from './lease.js';

/** How long a claim lasts unrenewed: rows held by a process that died are taken over this long after. */
export const CLAIM_LEASE_MS = 30_000;

/**
 * A table that several processes work through as a queue (the outbox, the scheduled deletions, the
 * unlink notices). Its rows carry leases (`src/db/lease.ts`) in `claimed_by` and `claimed_until`
 * (migrations/20261123_04_background_claims.ts).
 */
export interface Queue {
  table: string;
  /** The columns that name a row (its primary key). */
  key: readonly string[];
  /** Which rows are work as of `now` (an ISO time): not delivered yet, due. */
  work: (now: string) => RawBuilder<unknown>;
  /** The order work is taken in (the oldest first). */
  order: readonly string[];
}

/** Who claims rows: one random id per bot instance (so per process), and its clock. */
export interface Claimant {
  id: string;
  clock: Clock;
  /** How long a claim lasts unrenewed; `CLAIM_LEASE_MS` unless told. */
  leaseMs?: number;
}

/** A claimant with a new random id: one per bot instance, shared by its loops (each works through other tables). */
export function newClaimant(clock: Clock, leaseMs?: number): Claimant {
  return leaseMs === undefined ? { id: randomUUID(), clock } : { id: randomUUID(), clock, leaseMs };
}

/**
 * Rows claimed in one statement, held until each is done (deleted, or marked so that it is no longer
 * work) or the claim is released. While a claim is held no other process takes its rows; once its
 * lease lapses (its holder died or hangs) any process may.
 */
export interface Claim<Item> {
  items: Item[];
  /**
   * Whether `item` is still ours; to be asked before working on it. Once a third of the lease has
   * passed the lease is renewed first, and rows another process took over meanwhile are dropped.
   */
  holds(item: Item): Promise<boolean>;
  /** Gives back the rows of the claim not done yet, for any process to take at once (after a failure). */
  release(): Promise<void>;
}

/**
 * Claims up to `limit` rows of work, in the queue's order, for `claimant`: the leases of unclaimed (or
 * lapsed) rows taken in one statement (`takeMany`, which says how concurrent claims split the work).
 */
export async function claimRows<Row extends Record<string, unknown>, Item extends object>(
  db: LeaseExecutor,
  queue: Queue,
  claimant: Claimant,
  limit: number,
  toItem: (row: Row) => Item,
): Promise<Claim<Item>> {
  const leaseMs = claimant.leaseMs ?? CLAIM_LEASE_MS;
  const table = sql.table(queue.table);
  const keyOf = (row: Record<string, unknown>) => queue.key.map((column) => String(row[column])).join('\u0000');

  let claimedAt = claimant.clock.now();
  let until = new Date(claimedAt.getTime() + leaseMs).toISOString();
  const now = claimedAt.toISOString();
  const claimable = sql`(${queue.work(now)}) and ${freeAt(now)}`;
  // Looked for first: a poll that finds nothing stays a read, which on SQLite never waits for another
  // process's write (the update would, blocking this process while it waits).
  const { rows: found } = await sql`select 1 as found from ${table} where ${claimable} limit 1`.execute(db);
  if (found.length === 0) return { items: [], holds: async () => false, release: async () => undefined };
  const rows = await takeMany<Row>(db, queue, { holder: claimant.id, until }, now, { where: queue.work(now), order: queue.order, limit });
  // `returning` keeps no order.
  const columns = [...queue.order, ...queue.key];
  rows.sort((a, b) => {
    for (const column of columns) {
      const [x, y] = [a[column] as string | number, b[column] as string | number];
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  });

  const keys = new Map<Item, string>();
  const rowsByKey = new Map<string, Row>();
  const items = rows.map((row) => {
    const item = toItem(row);
    keys.set(item, keyOf(row));
    rowsByKey.set(keyOf(row), row);
    return item;
  });
  let held = new Set(keys.values());
  // The rows of this claim still held, found by their keys (the primary key's index).
  const ours = () => {
    const each = [...held].map(
      (k) =>
        sql`(${sql.join(
          queue.key.map((column) => sql`${sql.ref(column)} = ${rowsByKey.get(k)![column]}`),
          sql` and `,
        )})`,
    );
    return sql<boolean>`${heldAs({ holder: claimant.id, until })} and (${sql.join(each, sql` or `)})`;
  };
  return {
    items,
    async holds(item) {
      const at = claimant.clock.now();
      if (held.size > 0 && at.getTime() - claimedAt.getTime() >= leaseMs / 3) {
        const next = new Date(at.getTime() + leaseMs).toISOString();
        const key = sql.join(queue.key.map((column) => sql.ref(column)));
        const renewed = await sql<Row>`update ${table} set claimed_until = ${next} where ${ours()} returning ${key}`.execute(db);
        claimedAt = at;
        until = next;
        held = new Set(renewed.rows.map(keyOf));
      }
      return held.has(keys.get(item) ?? '');
    },
    async release() {
      if (held.size === 0) return;
      await sql`update ${table} set claimed_by = null, claimed_until = null where ${ours()}`.execute(db);
      held = new Set();
    },
  };
}
