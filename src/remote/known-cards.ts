import type { Cents } from '../core/ledger/money.js';
import { ownOperations } from './own-operations.js';
import { pollSchedule } from './poll-schedule.js';
import { type AnyDb, iso, remoteTables } from './tables.js';

/** What the bot knows of a card's plan (the interface's card record does not say it); each part absent when unknown. */
export interface KnownPlan {
  planId?: number;
  limit?: Cents;
  /** The creation fee the service took for the card. */
  creationFee?: Cents;
}

export interface KnownCard {
  cardId: string;
  addedAt: string;
  /** Watched closely ("waiting for a code") until then; null when not. */
  watchUntil: string | null;
  lastPolledAt: string | null;
}

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

/**
 * The cards the bot knows of each remote user: those it created, those seen in the user's transactions,
 * those the user added by id. The interface has no card listing, so these are the cards whose OTP lists
 * are polled. Every write is idempotent (several bot instances share the tables). With them, the polls'
 * schedule (poll-schedule.ts) and the bot's own operations under way (own-operations.ts).
 */
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

    ...ownOperations(db),
    ...pollSchedule(db),
  };
}

export type KnownCards = ReturnType<typeof createKnownCards>;
