import type { DeleteQueryBuilder, DeleteResult, Transaction } from 'kysely';
import type { Database, Db, Executor, PendingOperationRow } from '../../db/schema.js';
import { lockedCardStatus } from './card-queries.js';
import { recordCardTransaction } from './card-records.js';
import type { Clock } from '../../infra/clock.js';
import { runAttempt } from '../rules/cooldowns.js';
import { callProvider, CardServiceError } from '../rules/errors.js';
import { postJournal, SYSTEM_ACCOUNTS, systemAccountId, type PostedJournal } from '../ledger/ledger.js';
import type { Cents } from '../ledger/money.js';
import type { OperationHooks } from '../service.js';

export type PendingKind = PendingOperationRow['kind'];
type PendingQuery = DeleteQueryBuilder<Database, 'pending_operations', DeleteResult>;

/**
 * How old a pending operation must be before the recovery takes it for interrupted: longer than a request
 * lasts (the HTTP request timeout, 30 s, and a margin, as the `Idempotency-Key` lease), so an operation
 * still waiting on the provider in a live process is not settled under it.
 */
export const PENDING_GRACE_MS = 60_000;

export interface HoldRequest {
  id: string;
  kind: 'withdraw' | 'close' | 'create_card';
  userId: string;
  cardId: string;
  /** The account the amount is taken from: the card's (a withdrawal) or the wallet (a creation fee). */
  accountId: number;
  amount: Cents;
  couponId?: string | null;
  /**
   * The `Pending` Debit line the hold shows on the card's statement (a withdrawal's, a closure's), with
   * the operation's id: turned `Approved` when the operation settles (`settleLine`), removed when released.
   */
  line?: { type: string; currency: string; merchantName: string };
  at: string;
}

/** What the recovery settled, for the log: no card data. */
export interface RecoveredOperation {
  id: string;
  kind: PendingKind;
  amount: Cents;
  createdAt: string;
}

/**
 * Operations that call the card provider, which is never awaited inside a transaction (a transaction held
 * across a slow call would hold the whole commit batch, and a remote provider is slow). Each runs as:
 * 1. a transaction that checks the rules, holds the money the call is about (moved into the in-flight
 *    system account by a balanced journal) and records the operation (`hold`, `record`);
 * 2. the provider call, outside any transaction (`callProvider`): a refusal releases the hold at once;
 *    any other failure leaves the operation pending, its outcome unknown;
 * 3. a transaction that takes the operation and settles it (`finish`): the hold goes where the operation
 *    sends it.
 * Whoever deletes an operation's row settles it, once: the operation itself, or the recovery, which takes
 * operations pending longer than `PENDING_GRACE_MS` for failed (the sandbox provider keeps nothing across
 * a restart) and gives back what they held.
 *
 * Nothing held is invisible meanwhile: a withdrawal's or closure's hold is a `Pending` line on the card's
 * statement (so a card's balance is always what its Approved and Pending lines sum to), and a creation's
 * fee is held for a card in `processing`, written with the hold. Settling turns the line `Approved` and
 * the card `active`; a release removes them.
 */
interface PendingRecord {
  id: string;
  kind: PendingKind;
  userId: string;
  cardId: string;
  accountId: number | null;
  amount: Cents;
  holdJournalId: number | null;
  couponId: string | null;
  at: string;
}

async function insertPending(trx: Executor, r: PendingRecord): Promise<void> {
  await trx
    .insertInto('pending_operations')
    .values({
      id: r.id,
      kind: r.kind,
      user_id: r.userId,
      card_id: r.cardId,
      account_id: r.accountId,
      amount: r.amount,
      hold_journal_id: r.holdJournalId,
      coupon_id: r.couponId,
      created_at: r.at,
    })
    .execute();
}

export function createPendingOperations(db: Db, clock: Clock) {
  let inFlightAccount: number | undefined;
  const inFlight = async (trx: Executor) => (inFlightAccount ??= await systemAccountId(trx, SYSTEM_ACCOUNTS.inFlight));

  /** Moves the operation's amount out of the in-flight account to `accountId` (`system` when a system account's). */
  async function moveHeld(
    trx: Executor,
    op: PendingOperationRow,
    to: { accountId: number; system?: true; reference: string; kind: string; at: string },
  ) {
    const amount = Number(op.amount);
    const posted = await postJournal(trx, {
      reference: to.reference,
      kind: to.kind,
      at: to.at,
      postings: [
        to.system ? { accountId: to.accountId, amount, system: true } : { accountId: to.accountId, amount },
        { accountId: await inFlight(trx), amount: -amount, system: true },
      ],
    });
    if (!posted) throw new Error(`Pending operation ${op.id} could not be settled`);
    return posted;
  }

  /**
   * Turns the operation's `Pending` line `Approved`, the same line: its journal now the settling one,
   * its amount `amount` when given (a closure's, which takes what reached the card meanwhile too).
   * Returns its id, or null when the operation shows no line (it held nothing).
   */
  async function settleLine(
    trx: Executor,
    op: PendingOperationRow,
    to: { journalId: number; amount?: Cents; type?: string; at: string },
  ): Promise<string | null> {
    const settled = await trx
      .updateTable('card_transactions')
      .set({
        status: 'Approved',
        journal_id: to.journalId,
        ...(to.amount === undefined ? {} : { amount: to.amount, original_amount: to.amount }),
        ...(to.type === undefined ? {} : { type: to.type }),
        updated_at: to.at,
      })
      .where('id', '=', op.id)
      .where('status', '=', 'Pending')
      .executeTakeFirst();
    return settled.numUpdatedRows === 0n ? null : op.id;
  }

  /**
   * A creation released: its `processing` card goes, and the account written for it (nothing has moved
   * on either: the card takes money only once issued, and no statement line or code names it).
   */
  async function removeProcessingCard(trx: Executor, cardId: string): Promise<void> {
    const removed = await trx
      .deleteFrom('cards')
      .where('id', '=', cardId)
      .where('status', '=', 'processing')
      .returning('account_id')
      .executeTakeFirst();
    if (removed) await trx.deleteFrom('accounts').where('id', '=', removed.account_id).execute();
  }

  /** Whoever deletes the row settles the operation: the operation itself or a recovery, never both. */
  async function take(trx: Executor, id: string): Promise<PendingOperationRow | undefined> {
    return trx.deleteFrom('pending_operations').where('id', '=', id).returningAll().executeTakeFirst();
  }

  /**
   * Gives back what a failed operation held, and the coupon redemption of a creation: its `Pending` line
   * removed, its `processing` card removed. A withdrawal whose card was closed meanwhile (a cooldown
   * shorter than the provider call) gives its amount to the wallet, as the closure would have, its line
   * turned into the closure's. An `interrupted`
   * operation (a crash between its transactions) also gives back its cooldown attempt, as a crash inside
   * one transaction did; one the provider refused keeps it counted.
   */
  async function release(trx: Executor, op: PendingOperationRow, at: string, interrupted = false): Promise<void> {
    if (op.account_id !== null && op.hold_journal_id !== null) {
      const closed = op.kind !== 'create_card' && (await lockedCardStatus(trx, op.card_id)) === 'closed';
      const owner = closed
        ? await trx
            .selectFrom('cards')
            .innerJoin('users', 'users.id', 'cards.user_id')
            .select(['users.wallet_account_id as wallet', 'cards.currency as currency'])
            .where('cards.id', '=', op.card_id)
            .executeTakeFirstOrThrow()
        : undefined;
      const released = await moveHeld(trx, op, {
        accountId: owner?.wallet ?? op.account_id,
        reference: `release:${op.id}`,
        kind: `${op.kind}_release`,
        at,
      });
      if (owner) {
        // The held amount left the card for the wallet after all: its line stays, as the closure's.
        const settled = await settleLine(trx, op, { journalId: released.journalId, type: 'card_close', at });
        if (!settled) {
          await recordCardTransaction(trx, {
            cardId: op.card_id,
            userId: op.user_id,
            journalId: released.journalId,
            status: 'Approved',
            side: 'Debit',
            type: 'card_close',
            amount: Number(op.amount),
            currency: owner.currency,
            merchantName: 'Wallet',
            at,
          });
        }
      } else {
        await trx.deleteFrom('card_transactions').where('id', '=', op.id).where('status', '=', 'Pending').execute();
      }
    }
    if (op.kind === 'create_card') await removeProcessingCard(trx, op.card_id);
    if (op.coupon_id !== null) {
      await trx
        .updateTable('coupons')
        .set((eb) => ({ redemptions: eb('redemptions', '-', 1) }))
        .where('id', '=', op.coupon_id)
        .where('redemptions', '>', 0)
        .execute();
    }
    if (interrupted && op.kind !== 'create_card') {
      // Unless a later attempt was claimed since. The one before this claim had passed its cooldown,
      // so forgetting it refuses nothing it would have allowed.
      await trx
        .updateTable('cards')
        .set({ last_withdraw_attempt_at: null })
        .where('id', '=', op.card_id)
        .where('last_withdraw_attempt_at', '=', op.created_at)
        .execute();
    }
  }

  /** Settles as interrupted the operations `stale` selects, each taken by a conditional delete. */
  async function recoverIn(trx: Executor, stale: (q: PendingQuery) => PendingQuery, at: string): Promise<PendingOperationRow[]> {
    const taken = await stale(trx.deleteFrom('pending_operations')).returningAll().execute();
    for (const op of taken) await release(trx, op, at, true);
    return taken;
  }

  /** Releases the operation if it is still pending. */
  async function releaseNow(id: string, interrupted = false): Promise<void> {
    await db.transaction().execute(async (trx) => {
      const op = await take(trx, id);
      if (op) await release(trx, op, clock.now().toISOString(), interrupted);
    });
  }

  return {
    /**
     * Holds `amount` from the account in the in-flight account and records the operation, in the caller's
     * transaction. Returns null, having changed nothing, when the account holds less than `amount`.
     */
    async hold(trx: Executor, request: HoldRequest): Promise<PostedJournal | null> {
      const held = await postJournal(trx, {
        reference: `hold:${request.id}`,
        kind: `${request.kind}_hold`,
        at: request.at,
        postings: [
          { accountId: request.accountId, amount: -request.amount },
          { accountId: await inFlight(trx), amount: request.amount, system: true },
        ],
      });
      if (!held) return null;
      if (request.line) {
        await recordCardTransaction(trx, {
          id: request.id,
          cardId: request.cardId,
          userId: request.userId,
          journalId: held.journalId,
          status: 'Pending',
          side: 'Debit',
          type: request.line.type,
          amount: request.amount,
          currency: request.line.currency,
          merchantName: request.line.merchantName,
          at: request.at,
        });
      }
      await insertPending(trx, {
        id: request.id,
        kind: request.kind,
        userId: request.userId,
        cardId: request.cardId,
        accountId: request.accountId,
        amount: request.amount,
        holdJournalId: held.journalId,
        couponId: request.couponId ?? null,
        at: request.at,
      });
      return held;
    },

    /** Records an operation that holds no money (a closure), in the caller's transaction. */
    async record(trx: Executor, request: { id: string; kind: 'close'; userId: string; cardId: string; at: string }): Promise<void> {
      await insertPending(trx, { ...request, accountId: null, amount: 0, holdJournalId: null, couponId: null });
    },

    /**
     * Calls the provider for the pending operation `id`, outside any transaction. A provider refusal
     * (`Failed to … card: …`) releases what the operation held before it is thrown; any other error
     * leaves the operation pending (the provider may have acted) for the recovery.
     */
    async callProvider<T>(id: string, action: Parameters<typeof callProvider>[0], call: () => Promise<T>): Promise<T> {
      try {
        return await callProvider(action, call);
      } catch (error) {
        if (error instanceof CardServiceError) await releaseNow(id);
        throw error;
      }
    },

    /**
     * The operation's last transaction: takes the operation and runs `settle` (which moves what it held,
     * `settleHold`), then `hooks.commit`, so that a stored reply commits with the result. A refusal
     * `settle` throws still commits the operation's removal. Should the transaction fail otherwise (the
     * hook refusing a reply a retry took over), the operation is undone as when one transaction rolled
     * back whole: its hold and its attempt given back, so that only the retry counts.
     */
    async finish<R>(
      id: string,
      settle: (trx: Transaction<Database>, op: PendingOperationRow) => Promise<R>,
      hooks: OperationHooks<R> = {},
    ): Promise<R> {
      try {
        return await runAttempt(
          db,
          async (trx) => {
            const op = await take(trx, id);
            if (!op) throw new Error(`Pending operation ${id} was settled by the recovery meanwhile`);
            return settle(trx, op);
          },
          hooks,
        );
      } catch (error) {
        // After a refusal `settle` threw, the operation is gone already: this finds nothing.
        await releaseNow(id, true).catch(() => undefined);
        throw error;
      }
    },

    /** Moves what a settled operation held to its destination (the wallet, the revenue account). */
    settleHold: moveHeld,

    settleLine,

    /** Gives back what the operation held, in `finish`'s transaction (an operation its settle finds moot). */
    release,

    /** Whether a closure of the card is waiting on the provider. */
    async closing(cardId: string): Promise<boolean> {
      const row = await db
        .selectFrom('pending_operations')
        .select('id')
        .where('card_id', '=', cardId)
        .where('kind', '=', 'close')
        .executeTakeFirst();
      return row !== undefined;
    },

    /**
     * Settles as interrupted the caller's operations pending for longer than `PENDING_GRACE_MS`, in the
     * caller's transaction: run first by the caller's next withdrawal, closure or creation, so that a
     * crash does not keep their money or cooldown until the next sweep.
     */
    async recoverStale(trx: Executor, userId: string, now: Date): Promise<void> {
      const before = new Date(now.getTime() - PENDING_GRACE_MS).toISOString();
      await recoverIn(trx, (q) => q.where('user_id', '=', userId).where('created_at', '<=', before), now.toISOString());
    },

    /**
     * Settles as interrupted every operation pending for longer than `graceMs` (the sandbox provider keeps
     * nothing across a restart, so none of them happened there): holds given back, coupon redemptions
     * returned, cooldown attempts forgotten, cards left as they were. Each row is taken by a conditional
     * delete, so recoveries running at once in several processes settle each operation once.
     */
    async recover(graceMs = PENDING_GRACE_MS): Promise<RecoveredOperation[]> {
      const now = clock.now();
      const before = new Date(now.getTime() - graceMs).toISOString();
      const stale = await db
        .selectFrom('pending_operations')
        .select('id')
        .where('created_at', '<=', before)
        .orderBy('created_at')
        .execute();
      const recovered: RecoveredOperation[] = [];
      for (const { id } of stale) {
        const taken = await db.transaction().execute((trx) => recoverIn(trx, (q) => q.where('id', '=', id), now.toISOString()));
        for (const op of taken) recovered.push({ id: op.id, kind: op.kind, amount: Number(op.amount), createdAt: op.created_at });
      }
      return recovered;
    },
  };
}

export type PendingOperations = ReturnType<typeof createPendingOperations>;
