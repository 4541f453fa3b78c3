import type { Kysely } from 'kysely';

/** The tables of migrations/20261126_02_remote_watch.ts. Times are ISO 8601 strings (UTC), which sort as they compare. */
export type RemoteWatchTables = {
  bot_remote_cards: {
    user_id: string;
    card_id: string;
    added_at: string;
    watch_until: string | null;
    last_polled_at: string | null;
    baselined_at: string | null;
  };
  bot_remote_users: { user_id: string; last_polled_at: string | null; baselined_at: string | null };
  bot_remote_seen: { user_id: string; kind: 'otp' | 'transaction'; item_id: string; seen_at: string };
};

/** Any of our Kysely handles (the core's `Db`, the bot's `BotDb`, a transaction of either): the tables are reached through `withTables`. */
// biome-ignore lint/suspicious/noExplicitAny: any handle, whatever tables it is typed with
export type AnyDb = Kysely<any>;

export const remoteTables = (db: AnyDb) => db.withTables<RemoteWatchTables>() as unknown as Kysely<RemoteWatchTables>;

export interface KnownCard {
  cardId: string;
  addedAt: string;
  /** Watched closely ("waiting for a code") until then; null when not. */
  watchUntil: string | null;
  lastPolledAt: string | null;
}

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

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The cards the bot knows of each remote user: those it created, those seen in the user's transactions,
 * those the user added by id. The interface has no card listing, so these are the cards whose OTP lists
 * are polled. Every write is idempotent (several bot instances share the tables).
 */
/** A card's row when the bot first knows it: not yet polled, watched until `watchUntil`, with no history to take if `baselined`. */
function newCardRow(userId: string, cardId: string, at: Date, options: { watchUntil?: string; baselined?: boolean }) {
  return {
    user_id: userId,
    card_id: cardId,
    added_at: at.toISOString(),
    watch_until: options.watchUntil ?? null,
    last_polled_at: null,
    baselined_at: options.baselined ? at.toISOString() : null,
  };
}

export function createKnownCards(db: AnyDb) {
  const tables = () => remoteTables(db);

  return {
    /**
     * Remembers a card (nothing if known already). `fresh`: the bot has just created it, so it has no history
     * to take as such, and its first OTP is pushed however soon it comes; otherwise the first poll takes
     * the OTPs it already has as history. A card the transactions' poll remembered first (it saw the new
     * card's deposit before the bot's `fresh` came) and no poll has read since is made fresh all the same:
     * else its first OTPs would be taken as history and never pushed.
     */
    async remember(userId: string, cardId: string, at: Date, options: { fresh?: boolean } = {}): Promise<void> {
      await tables()
        .insertInto('bot_remote_cards')
        .values(newCardRow(userId, cardId, at, { baselined: options.fresh === true }))
        .onConflict((oc) =>
          options.fresh === true
            ? oc
                .columns(['user_id', 'card_id'])
                .doUpdateSet({ baselined_at: at.toISOString() })
                .where('bot_remote_cards.baselined_at', 'is', null)
            : oc.columns(['user_id', 'card_id']).doNothing(),
        )
        .execute();
    },

    /** Forgets a card (closed, or not found at the service); its OTP list is no longer read. */
    async forget(userId: string, cardId: string): Promise<void> {
      await tables().deleteFrom('bot_remote_cards').where('user_id', '=', userId).where('card_id', '=', cardId).execute();
    },

    /** Forgets every card of a user (the link ended) and what was seen for them. */
    async forgetUser(userId: string): Promise<void> {
      await tables().deleteFrom('bot_remote_cards').where('user_id', '=', userId).execute();
      await tables().deleteFrom('bot_remote_users').where('user_id', '=', userId).execute();
      await tables().deleteFrom('bot_remote_seen').where('user_id', '=', userId).execute();
    },

    async list(userId: string): Promise<KnownCard[]> {
      const rows = await tables()
        .selectFrom('bot_remote_cards')
        .select(['card_id', 'added_at', 'watch_until', 'last_polled_at'])
        .where('user_id', '=', userId)
        .orderBy('added_at')
        .orderBy('card_id')
        .execute();
      return rows.map((r) => ({ cardId: r.card_id, addedAt: r.added_at, watchUntil: r.watch_until, lastPolledAt: r.last_polled_at }));
    },

    /** Watches a card closely until `untilMs` (remembering it if it was not known). */
    async watch(userId: string, cardId: string, untilMs: number, at: Date): Promise<void> {
      await tables()
        .insertInto('bot_remote_cards')
        .values(newCardRow(userId, cardId, at, { watchUntil: iso(untilMs) }))
        .onConflict((oc) => oc.columns(['user_id', 'card_id']).doUpdateSet({ watch_until: iso(untilMs) }))
        .execute();
    },

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

export type KnownCards = ReturnType<typeof createKnownCards>;
