import { sql } from 'kysely';
import type { Clock } from '../card-service/from-core.js';
import type { leasesOn } from '../../db/lease.js';
import type { InboxDb, InboxExecutor } from './inbox-store.js';

/** A chat's lease as one drain holds it; `lost` once a renewal found another process holding it. */
export interface Lease {
  chatKey: string;
  holder: string;
  /** When it was last taken or renewed (clock time, ms). */
  renewedAt: number;
  lost: boolean;
}

/** What the chats' leases need: the database, the clock, the leases (`src/db/lease.ts`), a new holder's name each time one is taken. */
export interface ChatLeaseDeps {
  db: InboxDb;
  clock: Clock;
  leases: ReturnType<typeof leasesOn>;
  leaseMs: number;
  newHolder: () => string;
}

/**
 * Takes the chat's lease if it is free or has lapsed, writing the chat's row if it has none: one
 * statement, which also locks the row until the transaction ends (the holder's release waits for it).
 */
export async function take({ clock, leases, newHolder }: ChatLeaseDeps, ex: InboxExecutor, chatKey: string): Promise<Lease | undefined> {
  const now = clock.now();
  const holder = newHolder();
  const taken = await leases.take(ex, { chat_key: chatKey }, holder, now, { insert: {} });
  return taken === undefined ? undefined : { chatKey, holder, renewedAt: now.getTime(), lost: false };
}

export async function renew({ db, clock, leases }: ChatLeaseDeps, lease: Lease): Promise<boolean> {
  const now = clock.now();
  if ((await leases.renew(db, { chat_key: lease.chatKey }, { holder: lease.holder }, now)) !== undefined) lease.renewedAt = now.getTime();
  else lease.lost = true;
  return !lease.lost;
}

export async function release({ leases }: ChatLeaseDeps, ex: InboxExecutor, lease: Lease): Promise<void> {
  await leases.release(ex, { chat_key: lease.chatKey }, { holder: lease.holder });
}

/** Whether the lease is still ours, renewed first once a third of it has passed (an update may have run long). */
export const holds = async (deps: ChatLeaseDeps, lease: Lease) =>
  !lease.lost && (deps.clock.now().getTime() - lease.renewedAt < deps.leaseMs / 3 || (await renew(deps, lease)));

/**
 * Marks the update handled and, when the chat has no other, gives its lease back, in one transaction
 * (one commit). Returns whether the lease is still held (more to handle).
 */
export const finish = ({ db, clock, leases }: ChatLeaseDeps, lease: Lease, updateId: number) =>
  db.transaction().execute(async (trx) => {
    // The payload goes (it may hold a token the bot has deleted from the chat); the row stays a while to
    // recognise a repeated delivery.
    await trx
      .updateTable('bot_updates')
      .set({ handled_at: clock.now().toISOString(), payload: '' })
      .where('update_id', '=', updateId)
      .execute();
    const released = await leases.release(
      trx,
      { chat_key: lease.chatKey },
      { holder: lease.holder },
      {
        where: sql<boolean>`not exists (select update_id from bot_updates where bot_updates.chat_key = ${lease.chatKey} and handled_at is null)`,
      },
    );
    return !released;
  });
