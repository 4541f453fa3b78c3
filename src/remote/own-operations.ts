import { randomUUID } from 'node:crypto';
import { type AnyDb, iso, remoteTables, type Side } from './tables.js';

/**
 * The bot's own top-ups, withdrawals and closes under way (`bot_remote_own_operations`), which the watch does
 * not push: part of the known cards (known-cards.ts).
 */
export function ownOperations(db: AnyDb) {
  const tables = () => remoteTables(db);
  return {
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
  };
}

/** An operation under way on a card, on one side (`ownUnderWay`). */
export const ownKey = (cardId: string, side: Side) => `${cardId}\u0000${side}`;
