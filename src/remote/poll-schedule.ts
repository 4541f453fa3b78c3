import { type AnyDb, iso, remoteTables } from './tables.js';

/**
 * When each poll of the watch is due, and who takes it: a card's OTP list, a user's first page of
 * transactions; part of the known cards (known-cards.ts). A poll is claimed by setting its time if nobody
 * set it since it was read, so instances share the polling rather than repeat it.
 */

/** A card whose OTP list is due to be read. */
export interface DueCard {
  userId: string;
  cardId: string;
  /** Watched closely now (polled every second rather than every `pollSeconds`). */
  watched: boolean;
  /** As read: the poll claims the card only if no one has polled it since (`claimCard`). */
  lastPolledAt: string | null;
}

/** A user whose first page of transactions is due to be read. */
export interface DueUser {
  userId: string;
  lastPolledAt: string | null;
}

/** `in (...)` lists kept well inside both databases' limits on bound values. */
const CHUNK = 500;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

export function pollSchedule(db: AnyDb) {
  const tables = () => remoteTables(db);
  return {
    /** Makes sure each user has its row (for its transactions' poll times). */
    async ensureUsers(userIds: readonly string[]): Promise<void> {
      for (const part of chunks(userIds)) {
        if (part.length === 0) continue;
        await tables()
          .insertInto('bot_remote_users')
          .values(part.map((userId) => ({ user_id: userId, last_polled_at: null, baselined_at: null })))
          .onConflict((oc) => oc.column('user_id').doNothing())
          .execute();
      }
    },

    /**
     * The cards of these users due for a poll at `nowMs`: watched ones not polled in the last `watchMs`, the
     * others not polled in the last `pollMs` (never polled first). `watchedOnly`: the watched ones alone.
     */
    async dueCards(
      userIds: readonly string[],
      nowMs: number,
      { pollMs, watchMs, watchedOnly = false }: { pollMs: number; watchMs: number; watchedOnly?: boolean },
    ): Promise<DueCard[]> {
      const now = iso(nowMs);
      const out: DueCard[] = [];
      for (const part of chunks(userIds)) {
        if (part.length === 0) continue;
        let query = tables()
          .selectFrom('bot_remote_cards')
          .select(['user_id', 'card_id', 'watch_until', 'last_polled_at'])
          .where('user_id', 'in', part);
        query = watchedOnly
          ? query
              .where('watch_until', '>', now)
              .where((eb) => eb.or([eb('last_polled_at', 'is', null), eb('last_polled_at', '<=', iso(nowMs - watchMs))]))
          : query.where((eb) =>
              eb.or([
                eb('last_polled_at', 'is', null),
                eb('last_polled_at', '<=', iso(nowMs - pollMs)),
                eb.and([eb('watch_until', '>', now), eb('last_polled_at', '<=', iso(nowMs - watchMs))]),
              ]),
            );
        const rows = await query.orderBy('last_polled_at').orderBy('card_id').execute();
        for (const r of rows)
          out.push({
            userId: r.user_id,
            cardId: r.card_id,
            watched: r.watch_until !== null && r.watch_until > now,
            lastPolledAt: r.last_polled_at,
          });
      }
      return out;
    },

    /** The users among these whose first page of transactions was not read in the last `pollMs`. */
    async dueUsers(userIds: readonly string[], nowMs: number, pollMs: number): Promise<DueUser[]> {
      const out: DueUser[] = [];
      for (const part of chunks(userIds)) {
        if (part.length === 0) continue;
        const rows = await tables()
          .selectFrom('bot_remote_users')
          .select(['user_id', 'last_polled_at'])
          .where('user_id', 'in', part)
          .where((eb) => eb.or([eb('last_polled_at', 'is', null), eb('last_polled_at', '<=', iso(nowMs - pollMs))]))
          .execute();
        for (const r of rows) out.push({ userId: r.user_id, lastPolledAt: r.last_polled_at });
      }
      return out;
    },

    /**
     * Takes the card's next poll: true when nobody (another instance) polled it since it was read as due,
     * and then it counts as polled at `at`.
     */
    async claimCard(due: DueCard, at: Date): Promise<boolean> {
      const result = await tables()
        .updateTable('bot_remote_cards')
        .set({ last_polled_at: at.toISOString() })
        .where('user_id', '=', due.userId)
        .where('card_id', '=', due.cardId)
        .where((eb) => (due.lastPolledAt === null ? eb('last_polled_at', 'is', null) : eb('last_polled_at', '=', due.lastPolledAt)))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    /** Gives back a claim made at `at` whose poll did not happen (the service was unavailable): the card is due again. */
    async releaseCard(due: DueCard, at: Date): Promise<void> {
      await tables()
        .updateTable('bot_remote_cards')
        .set({ last_polled_at: due.lastPolledAt })
        .where('user_id', '=', due.userId)
        .where('card_id', '=', due.cardId)
        .where('last_polled_at', '=', at.toISOString())
        .execute();
    },

    /** As `releaseCard`, for the user's first page of transactions. */
    async releaseUser(due: DueUser, at: Date): Promise<void> {
      await tables()
        .updateTable('bot_remote_users')
        .set({ last_polled_at: due.lastPolledAt })
        .where('user_id', '=', due.userId)
        .where('last_polled_at', '=', at.toISOString())
        .execute();
    },

    /** As `claimCard`, for the user's first page of transactions. */
    async claimUser(due: DueUser, at: Date): Promise<boolean> {
      const result = await tables()
        .updateTable('bot_remote_users')
        .set({ last_polled_at: at.toISOString() })
        .where('user_id', '=', due.userId)
        .where((eb) => (due.lastPolledAt === null ? eb('last_polled_at', 'is', null) : eb('last_polled_at', '=', due.lastPolledAt)))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}
