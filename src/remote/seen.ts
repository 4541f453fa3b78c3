import type { Executor } from '../db/schema.js';
import { type AnyDb, remoteTables } from './tables.js';

/**
 * What the remote watch has seen (`bot_remote_seen`): one row per OTP and transaction a user's polls found,
 * inserted in the transaction that records its push, so that it is recorded once whoever polls.
 */

/** An item the watch records: a card's OTP or a user's transaction. */
export type SeenKind = 'otp' | 'transaction';

const DAY_MS = 24 * 60 * 60 * 1000;
/** How long the seen rows of OTPs (and of transactions no longer among a user's newest) are kept. */
const SEEN_KEPT_MS = 30 * DAY_MS;
/** An item created longer ago than this is never pushed: it is one whose seen row was pruned, not news. */
const STALE_MS = 14 * DAY_MS;
/** How often the watch prunes the seen rows. */
export const PRUNE_EVERY_MS = 60 * 60 * 1000;

/** Whether an item the service dates (`createdAt`, ISO) is too old to push; an undated item is not. */
export function isStale(createdAt: string, at: string): boolean {
  const created = Date.parse(createdAt);
  return Number.isFinite(created) && Date.parse(at) - created > STALE_MS;
}

/** The ids among `ids` the user's polls have already seen. */
export async function seenAmong(db: AnyDb, userId: string, kind: SeenKind, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await remoteTables(db)
    .selectFrom('bot_remote_seen')
    .select('item_id')
    .where('user_id', '=', userId)
    .where('kind', '=', kind)
    .where('item_id', 'in', ids)
    .execute();
  return new Set(rows.map((r) => r.item_id));
}

/** Inserts the item's seen row: true when this call inserted it (and so records its event). */
export async function markSeen(ex: Executor, userId: string, kind: SeenKind, itemId: string, at: string): Promise<boolean> {
  const result = await remoteTables(ex)
    .insertInto('bot_remote_seen')
    .values({ user_id: userId, kind, item_id: itemId, seen_at: at })
    .onConflict((oc) => oc.columns(['user_id', 'kind', 'item_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/**
 * Forgets the seen rows older than `SEEN_KEPT_MS`, except each user's newest `keepTransactions` transaction
 * rows: those are the transactions the first pages may still show, undated ones included, and a forgotten
 * one there would be pushed again. An older OTP or transaction that comes back is older than `STALE_MS`, so
 * it is taken as seen again, not pushed. Returns the rows deleted.
 */
export async function pruneSeen(db: Executor, now: Date, keepTransactions: number): Promise<number> {
  const cutoff = new Date(now.getTime() - SEEN_KEPT_MS).toISOString();
  const result = await remoteTables(db)
    .deleteFrom('bot_remote_seen as s')
    .where('s.seen_at', '<', cutoff)
    .where((eb) =>
      eb.or([
        eb('s.kind', '=', 'otp'),
        eb(
          's.item_id',
          'not in',
          eb
            .selectFrom('bot_remote_seen as k')
            .select('k.item_id')
            .whereRef('k.user_id', '=', 's.user_id')
            .where('k.kind', '=', 'transaction')
            .orderBy('k.seen_at', 'desc')
            .orderBy('k.item_id', 'desc')
            .limit(keepTransactions),
        ),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
