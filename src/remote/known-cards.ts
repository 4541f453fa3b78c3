import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Cents } from '../core/ledger/money.js';

/**
 * The tables of migrations/20261126_02_remote_watch.ts and 20261128_01_remote_plans_own_operations.ts. Times
 * are ISO 8601 strings (UTC), which sort as they compare; amounts integer cents (a Postgres `bigint` reads
 * back as a string).
 */
export type RemoteWatchTables = {
  bot_remote_cards: {
    user_id: string;
    card_id: string;
    added_at: string;
    watch_until: string | null;
    last_polled_at: string | null;
    baselined_at: string | null;
    plan_id: number | null;
    limit_cents: number | string | null;
    creation_fee: number | string | null;
    withdrawal_attempted_at: string | null;
  };
  bot_remote_users: { user_id: string; last_polled_at: string | null; baselined_at: string | null };
  bot_remote_seen: { user_id: string; kind: 'otp' | 'transaction'; item_id: string; seen_at: string };
  bot_remote_own_operations: { id: string; user_id: string; card_id: string; side: Side; hold_until: string };
};

/** The side a transaction has on its card. */
export type Side = 'Credit' | 'Debit';

/** What the bot knows of a card's plan (the interface's card record does not say it); each part absent when unknown. */
export interface KnownPlan {
  planId?: number;
  limit?: Cents;
  /** The creation fee the service took for the card. */
  creationFee?: Cents;
}

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

    /** Remembers what the bot knows of a card's plan (remembering the card if it was not known); a part left out is kept as it was. */
    async rememberPlan(userId: string, cardId: string, plan: KnownPlan, at: Date): Promise<void> {
      const set = {
        ...(plan.planId === undefined ? {} : { plan_id: plan.planId }),
        ...(plan.limit === undefined ? {} : { limit_cents: plan.limit }),
        ...(plan.creationFee === undefined ? {} : { creation_fee: plan.creationFee }),
      };
      if (Object.keys(set).length === 0) return;
      await tables()
        .insertInto('bot_remote_cards')
        .values({ ...newCardRow(userId, cardId, at, {}), ...set })
        .onConflict((oc) => oc.columns(['user_id', 'card_id']).doUpdateSet(set))
        .execute();
    },

    /** A withdrawal or close of the card the service counted, sent at `at` (remembering the card if it was not known). */
    async noteWithdrawalAttempt(userId: string, cardId: string, at: Date): Promise<void> {
      const set = { withdrawal_attempted_at: at.toISOString() };
      await tables()
        .insertInto('bot_remote_cards')
        .values({ ...newCardRow(userId, cardId, at, {}), ...set })
        .onConflict((oc) => oc.columns(['user_id', 'card_id']).doUpdateSet(set))
        .execute();
    },

    /** When the bot last sent a counted withdrawal or close of the card (ISO); undefined when never. */
    async withdrawalAttemptOf(userId: string, cardId: string): Promise<string | undefined> {
      const row = await tables()
        .selectFrom('bot_remote_cards')
        .select('withdrawal_attempted_at')
        .where('user_id', '=', userId)
        .where('card_id', '=', cardId)
        .executeTakeFirst();
      return row?.withdrawal_attempted_at ?? undefined;
    },

    /** What the bot knows of the card's plan: empty when nothing (or the card is not known). */
    async planOf(userId: string, cardId: string): Promise<KnownPlan> {
      const row = await tables()
        .selectFrom('bot_remote_cards')
        .select(['plan_id', 'limit_cents', 'creation_fee'])
        .where('user_id', '=', userId)
        .where('card_id', '=', cardId)
        .executeTakeFirst();
      if (!row) return {};
      return {
        ...(row.plan_id === null ? {} : { planId: Number(row.plan_id) }),
        ...(row.limit_cents === null ? {} : { limit: Number(row.limit_cents) }),
        ...(row.creation_fee === null ? {} : { creationFee: Number(row.creation_fee) }),
      };
    },

    /**
     * A top-up, withdrawal or close the bot is about to send for the card: until it is settled (`settleOwn`)
     * or `holdUntilMs` has passed, the watcher pushes no transaction of that card on that `side`. Returns
     * the operation's id. Written before the request is sent, so that a poll that reads the operation's
     * transaction finds the row, or else (the answer came back) the transaction already marked seen.
     */
    async beginOwn(userId: string, cardId: string, side: Side, holdUntilMs: number): Promise<string> {
      const id = randomUUID();
      await tables()
        .insertInto('bot_remote_own_operations')
        .values({ id, user_id: userId, card_id: cardId, side, hold_until: iso(holdUntilMs) })
        .execute();
      return id;
    },

    /**
     * The operation's answer came back: its transaction (when it has one) is marked seen, so never pushed, and
     * its row goes, in one transaction. Without a transaction id (refused, its outcome unknown, a close of an
     * empty card) the row goes alone: a transaction that turns up after all is pushed, which tells the user.
     */
    async settleOwn(operationId: string, userId: string, transactionId: string | null, at: Date): Promise<void> {
      await db.transaction().execute(async (trx) => {
        const t = remoteTables(trx);
        if (transactionId !== null)
          await t
            .insertInto('bot_remote_seen')
            .values({ user_id: userId, kind: 'transaction', item_id: transactionId, seen_at: at.toISOString() })
            .onConflict((oc) => oc.columns(['user_id', 'kind', 'item_id']).doNothing())
            .execute();
        await t.deleteFrom('bot_remote_own_operations').where('id', '=', operationId).execute();
      });
    },

    /** The user's cards and sides an operation of the bot is under way on at `nowMs`, as `ownKey`s. */
    async ownUnderWay(userId: string, nowMs: number): Promise<Set<string>> {
      const rows = await tables()
        .selectFrom('bot_remote_own_operations')
        .select(['card_id', 'side'])
        .where('user_id', '=', userId)
        .where('hold_until', '>', iso(nowMs))
        .execute();
      return new Set(rows.map((r) => ownKey(r.card_id, r.side)));
    },

    /** Deletes the rows of operations whose hold ended before `nowMs` (an instance stopped mid-request). */
    async pruneOwn(nowMs: number): Promise<void> {
      await tables().deleteFrom('bot_remote_own_operations').where('hold_until', '<=', iso(nowMs)).execute();
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

/** An operation under way on a card, on one side (`ownUnderWay`). */
export const ownKey = (cardId: string, side: Side) => `${cardId}\u0000${side}`;
