import type { DeleteQueryBuilder, DeleteResult, Transaction } from 'kysely';
import type { Database, Db, Executor, PendingOperationRow } from '../../db/schema.js';
import type { Clock } from '../../infra/clock.js';
import { runAttempt } from '../rules/cooldowns.js';
import { callProvider, CardServiceError } from '../rules/errors.js';
import { postJournal, SYSTEM_ACCOUNTS, systemAccountIds, type PostedJournal, type SystemAccountIds } from '../ledger/ledger.js';
import type { Cents } from '../ledger/money.js';
import type { OperationHooks } from '../service.js';
import { recordCardTransaction } from './card-records.js';
import type { CardProvider, IssuedCard } from '../provider/provider.js';
import type { CardDataCipher } from '../keys/secrets.js';
import { completeInterruptedClosure } from '../money-store/portable/closure.js';
import { completeInterruptedCreation } from '../money-store/portable/creation.js';
import {
  askProviderFirst,
  type HeldDestination,
  type InFlight,
  moveHeld,
  type PendingVerdict,
  providerIsAsked,
  release,
  settleLine,
} from './pending-settlement.js';

export type PendingKind = PendingOperationRow['kind'];
type PendingQuery = DeleteQueryBuilder<Database, 'pending_operations', DeleteResult>;
type ProviderAction = Parameters<typeof callProvider>[0];
/** An operation's last step, given the operation taken: `finish` runs it in its transaction. */
type Settle<R> = (trx: Transaction<Database>, op: PendingOperationRow) => Promise<R>;

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
  /** Finished, as the provider showed it done (a closure closed, a creation's card made), not settled as failed. */
  completed?: true;
  /** Not settled: why (it stays pending for the next recovery; the others are settled all the same). */
  failed?: string;
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
 *
 * Each step is a function below taking what it needs; this factory binds them to one database, clock
 * and in-flight account, its id from the core's `systemAccounts` (a recovery on its own keeps its own),
 * and what the recovery needs to ask the card provider first when it can tell what became of an operation
 * (`askProviderFirst`: Lithic, not the sandbox) and to finish one it did: the provider and the card-data
 * cipher (an adopted card's row is sealed as a new one is).
 */
export function createPendingOperations(
  db: Db,
  clock: Clock,
  systemAccounts: SystemAccountIds = systemAccountIds(),
  recovery?: { provider: CardProvider; cipher: CardDataCipher },
) {
  const deps: PendingDeps = { db, clock, inFlight: (ex) => systemAccounts(ex, SYSTEM_ACCOUNTS.inFlight) };
  const provider = recovery?.provider;
  const asked = provider && ((op: PendingOperationRow) => askProviderFirst(db, provider, op, clock.now()));
  const complete = (trx: Executor, op: PendingOperationRow, at: string, issued?: IssuedCard) => {
    if (op.kind === 'close') return completeInterruptedClosure(operations, trx, op, at);
    if (op.kind === 'create_card' && issued && recovery) {
      return completeInterruptedCreation({ cipher: recovery.cipher, systemAccounts, pending: operations }, trx, op, at, issued);
    }
    throw new Error(`A ${op.kind} is not finished by the recovery`);
  };
  const operations = {
    hold: (trx: Executor, request: HoldRequest) => hold(deps.inFlight, trx, request),
    record,
    callProvider: <T>(id: string, action: ProviderAction, call: () => Promise<T>) => callProviderFor(deps, id, action, call),
    finish: <R>(id: string, settle: Settle<R>, hooks?: OperationHooks<R>) => finish(deps, id, settle, hooks),
    finishWhole: <R>(id: string, settle: (ex: Executor) => Promise<R>, hooks?: OperationHooks<R>) => finishWhole(deps, id, settle, hooks),
    /** Moves what a settled operation held to its destination (the wallet, the revenue account). */
    settleHold: (trx: Executor, op: PendingOperationRow, to: HeldDestination) => moveHeld(deps.inFlight, trx, op, to),
    settleLine,
    /** Gives back what the operation held, in `finish`'s transaction (an operation its settle finds moot). */
    release: (trx: Executor, op: PendingOperationRow, at: string, interrupted?: boolean) =>
      release(deps.inFlight, trx, op, at, interrupted),
    /** The in-flight account's id, looked up once (the statements that hold and settle in one go name it). */
    inFlightAccount: (ex: Executor) => deps.inFlight(ex),
    closing: (cardId: string) => closing(db, cardId),
    recoverStale: (trx: Executor, userId: string, now: Date) =>
      recoverStale(deps.inFlight, trx, userId, now, (kind) => providerIsAsked(provider, kind)),
    /** Settles what a crash left pending, asking the provider first where it can tell (`askProviderFirst`). */
    recover: (graceMs?: number): Promise<RecoveredOperation[]> => recover(deps, { graceMs, ask: asked }, complete),
    /**
     * Settles only what needs no asking (the start of any process, the admin command line's too, which must
     * not wait on the provider): what the provider must be asked about is left to the housekeeping.
     */
    recoverUnasked: (): Promise<RecoveredOperation[]> => recover(deps, { skip: (kind) => providerIsAsked(provider, kind) }, complete),
    /**
     * `recover` for one card's operations, before a new closure of it, when the provider is asked about closures
     * (one a crash left waiting is settled first); else nothing: the closure's `recoverStale` releases it.
     */
    recoverCard: async (cardId: string, userId: string): Promise<RecoveredOperation[]> =>
      providerIsAsked(provider, 'close') ? recover(deps, { ask: asked, cardId, userId }, complete) : [],
  };
  return operations;
}

export type PendingOperations = ReturnType<typeof createPendingOperations>;

/** What the steps share: the database (for the steps that open their own transactions), the clock, the in-flight account. */
interface PendingDeps {
  db: Db;
  clock: Clock;
  inFlight: InFlight;
}

/**
 * Holds `amount` from the account in the in-flight account and records the operation, in the caller's
 * transaction. Returns null, having changed nothing, when the account holds less than `amount`.
 */
async function hold(inFlight: InFlight, trx: Executor, request: HoldRequest): Promise<PostedJournal | null> {
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
}

/** Records an operation that holds no money (a closure), in the caller's transaction. */
async function record(trx: Executor, request: { id: string; kind: 'close'; userId: string; cardId: string; at: string }): Promise<void> {
  await insertPending(trx, { ...request, accountId: null, amount: 0, holdJournalId: null, couponId: null });
}

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

/**
 * Calls the provider for the pending operation `id`, outside any transaction. A provider refusal
 * (`Failed to … card: …`) releases what the operation held before it is thrown; any other error
 * leaves the operation pending (the provider may have acted) for the recovery.
 */
async function callProviderFor<T>(deps: PendingDeps, id: string, action: ProviderAction, call: () => Promise<T>): Promise<T> {
  try {
    return await callProvider(action, call);
  } catch (error) {
    if (error instanceof CardServiceError) await releaseNow(deps, id);
    throw error;
  }
}

/**
 * The operation's last transaction: takes the operation and runs `settle` (which moves what it held,
 * `settleHold`), then `hooks.commit`, so that a stored reply commits with the result. A refusal
 * `settle` throws still commits the operation's removal. Should the transaction fail otherwise (the
 * hook refusing a reply a retry took over), the operation is undone as when one transaction rolled
 * back whole: its hold and its attempt given back, so that only the retry counts.
 */
async function finish<R>(deps: PendingDeps, id: string, settle: Settle<R>, hooks: OperationHooks<R> = {}): Promise<R> {
  return settledOrReleased(deps, id, () =>
    runAttempt(
      deps.db,
      async (trx) => {
        const op = await take(trx, id);
        if (!op) throw new Error(`Pending operation ${id} was settled by the recovery meanwhile`);
        return settle(trx, op);
      },
      hooks,
    ),
  );
}

/**
 * `finish` for a `settle` that takes the operation itself (one statement that deletes its row and moves
 * its hold: `settleWithdrawal`). Without `hooks.commit` it runs outside a transaction, so the statement
 * commits on its own; with it, in one transaction beside the hook.
 */
async function finishWhole<R>(
  deps: PendingDeps,
  id: string,
  settle: (ex: Executor) => Promise<R>,
  hooks: OperationHooks<R> = {},
): Promise<R> {
  return settledOrReleased(deps, id, () => (hooks.commit ? runAttempt(deps.db, settle, hooks) : settle(deps.db)));
}

/** Runs the settling; should it fail, the operation is released if it is still pending (see `finish`). */
async function settledOrReleased<R>(deps: PendingDeps, id: string, settling: () => Promise<R>): Promise<R> {
  try {
    return await settling();
  } catch (error) {
    // After a refusal the settling threw, the operation is gone already: this finds nothing.
    await releaseNow(deps, id, true).catch(() => undefined);
    throw error;
  }
}

/** Whoever deletes the row settles the operation: the operation itself or a recovery, never both. */
async function take(trx: Executor, id: string): Promise<PendingOperationRow | undefined> {
  return trx.deleteFrom('pending_operations').where('id', '=', id).returningAll().executeTakeFirst();
}

/** Releases the operation if it is still pending. */
async function releaseNow(deps: PendingDeps, id: string, interrupted = false): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const op = await take(trx, id);
    if (op) await release(deps.inFlight, trx, op, deps.clock.now().toISOString(), interrupted);
  });
}

/** Whether a closure of the card is waiting on the provider (its balance already held off it). */
export async function closing(ex: Executor, cardId: string): Promise<boolean> {
  const row = await ex
    .selectFrom('pending_operations')
    .select('id')
    .where('card_id', '=', cardId)
    .where('kind', '=', 'close')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Settles as interrupted the caller's operations pending for longer than `PENDING_GRACE_MS`, in the
 * caller's transaction: run first by the caller's next withdrawal, closure or creation, so that a
 * crash does not keep their money or cooldown until the next sweep. Operations the provider must be
 * asked about first (`asked`: a Lithic creation or closure) are left to the recovery that asks.
 */
async function recoverStale(
  inFlight: InFlight,
  trx: Executor,
  userId: string,
  now: Date,
  asked: (kind: PendingKind) => boolean,
): Promise<void> {
  const before = new Date(now.getTime() - PENDING_GRACE_MS).toISOString();
  const kinds = (['withdraw', 'close', 'create_card'] as const).filter((kind) => !asked(kind));
  await recoverIn(
    inFlight,
    trx,
    (q) => q.where('user_id', '=', userId).where('created_at', '<=', before).where('kind', 'in', kinds),
    now.toISOString(),
  );
}

/**
 * Settles as interrupted every operation pending for longer than `graceMs` (the sandbox provider keeps
 * nothing across a restart, so none of them happened there): holds given back, coupon redemptions
 * returned, cooldown attempts forgotten, cards left as they were. A provider that remembers is asked
 * first (`ask`): one it cannot answer for waits; one it did (`done`) is finished by `complete`. Each row
 * is taken by a conditional delete, so recoveries running at once in several processes settle each
 * operation once. One that fails (an adopted card refused by the database, a retired card-data key) stays
 * pending, listed with why (`failed`), and holds none of the others back.
 */
async function recover(
  deps: PendingDeps,
  scope: {
    graceMs?: number | undefined;
    ask?: ((op: PendingOperationRow) => Promise<PendingVerdict>) | undefined;
    /** Only this card's operations, of this user. */
    cardId?: string;
    userId?: string;
    /** Kinds left pending (those the provider must be asked about, when not asking). */
    skip?: (kind: PendingKind) => boolean;
  },
  complete: (trx: Executor, op: PendingOperationRow, at: string, issued?: IssuedCard) => Promise<void>,
): Promise<RecoveredOperation[]> {
  const { ask, cardId, userId, skip } = scope;
  const now = deps.clock.now();
  const before = new Date(now.getTime() - (scope.graceMs ?? PENDING_GRACE_MS)).toISOString();
  let query = deps.db.selectFrom('pending_operations').selectAll().where('created_at', '<=', before);
  if (cardId !== undefined) query = query.where('card_id', '=', cardId);
  if (userId !== undefined) query = query.where('user_id', '=', userId);
  const stale = (await query.orderBy('created_at').execute()).filter((op) => !skip?.(op.kind));
  const recovered: RecoveredOperation[] = [];
  for (const op of stale) {
    try {
      recovered.push(...(await recoverOne(deps, op, ask, complete, now)));
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      recovered.push({ id: op.id, kind: op.kind, amount: Number(op.amount), createdAt: op.created_at, failed: why });
    }
  }
  return recovered;
}

/** One operation of `recover`: the provider asked (when it can tell), then the operation settled or finished. */
async function recoverOne(
  deps: PendingDeps,
  op: PendingOperationRow,
  ask: ((op: PendingOperationRow) => Promise<PendingVerdict>) | undefined,
  complete: (trx: Executor, op: PendingOperationRow, at: string, issued?: IssuedCard) => Promise<void>,
  now: Date,
): Promise<RecoveredOperation[]> {
  const verdict = ask === undefined ? 'release' : await ask(op);
  if (verdict === 'wait') return [];
  const { id } = op;
  const at = now.toISOString();
  const taken = await deps.db.transaction().execute(async (trx) => {
    if (verdict === 'release') return recoverIn(deps.inFlight, trx, (q) => q.where('id', '=', id), at);
    const row = await take(trx, id);
    if (row) await complete(trx, row, at, verdict === 'done' ? undefined : verdict.issued);
    return row ? [row] : [];
  });
  return taken.map((row) => ({
    id: row.id,
    kind: row.kind,
    amount: Number(row.amount),
    createdAt: row.created_at,
    ...(verdict === 'release' ? {} : { completed: true as const }),
  }));
}

/** Settles as interrupted the operations `stale` selects, each taken by a conditional delete. */
async function recoverIn(
  inFlight: InFlight,
  trx: Executor,
  stale: (q: PendingQuery) => PendingQuery,
  at: string,
): Promise<PendingOperationRow[]> {
  const taken = await stale(trx.deleteFrom('pending_operations')).returningAll().execute();
  for (const op of taken) await release(inFlight, trx, op, at, true);
  return taken;
}
