import { sql, type Transaction, type TransactionBuilder } from 'kysely';
import { claimRows, type Claim, type Claimant, type Queue } from '../../db/claims.js';
import { EVENTS_CHANNEL, notifyOnCommit, type Listener } from '../../db/notify.js';
import type { Database, Db, Executor, OutboxRow } from '../../db/schema.js';
import { getOrCreate } from '../../infra/get-or-create.js';
import type { DeclineCode, DeclineFix } from '../authorization/declines.js';

export interface OtpEvent {
  kind: 'otp';
  otpId: string;
  cardId: string;
  cardName: string;
  maskedPan: string;
  code: string;
  amount: number;
  currency: string;
  merchantName: string;
  createdAt: string;
}

export interface CardTransactionEvent {
  kind: 'card_transaction';
  transactionId: string;
  cardId: string;
  cardName: string;
  maskedPan: string;
  /** `Pending`: an authorization approved and held, not yet cleared; `Reversed`: such a hold voided or expired. */
  status: 'Approved' | 'Declined' | 'Pending' | 'Reversed';
  side: 'Debit' | 'Credit';
  type: string;
  amount: number;
  currency: string;
  merchantName: string;
  declineCode: string | null;
  /** For a declined purchase: what fixes it (the alert's button), or null when nothing should be offered. */
  fix?: DeclineFix | null;
  cardBalance: number;
  createdAt: string;
}

/** A purchase to approve in chat (3-D Secure out of band): Approve or Decline until `expiresAt`. */
export interface ChallengeEvent {
  kind: 'challenge';
  challengeId: string;
  cardId: string;
  cardName: string;
  maskedPan: string;
  amount: number;
  currency: string;
  merchantName: string;
  expiresAt: string;
  createdAt: string;
}

/** Auto top-up ran (`done`) or could not (`failed`, with why: the chat is told the fix). */
export interface AutoTopupEvent {
  kind: 'auto_topup';
  cardId: string;
  cardName: string;
  maskedPan: string;
  outcome: 'done' | 'failed';
  /** Cents put on the card (done) or that would have been (failed). */
  amount: number;
  /** Why it could not run: the wallet cannot cover it, the plan's limit, or it ran too recently. */
  reason: 'wallet_short' | 'plan_limit' | 'rate_limited' | null;
  /** The purchase it ran for, when it ran during an authorization (its decline code if still declined). */
  declineCode: DeclineCode | null;
  walletBalance: number;
  cardBalance: number;
  createdAt: string;
}

/** A deposit request was approved or rejected (by anyone: the admins' chat, the command line). */
export interface DepositDecisionEvent {
  kind: 'deposit_decision';
  requestId: number;
  amount: number;
  status: 'approved' | 'rejected';
  /** Why it was rejected, as stored (a preset reason in English, or as typed); null when approved. */
  reason: string | null;
  /** The wallet's balance right after the credit; null when rejected. */
  walletBalance: number | null;
  decidedAt: string;
}

/** Amounts are cents. */
export type CoreEvent = OtpEvent | CardTransactionEvent | DepositDecisionEvent | ChallengeEvent | AutoTopupEvent;

export interface PendingEvent {
  seq: number;
  userId: string;
  event: CoreEvent;
}

/**
 * Written in the same transaction as the change it reports, so no event is lost on a crash. Its
 * consumers are told once it commits: on Postgres by a notification sent at the commit (any process
 * listening); in this process by the database handle the core runs its transactions on
 * (`announcingCommits`), right after the commit.
 */
export async function recordEvent(ex: Executor, userId: string, event: CoreEvent, at: string): Promise<void> {
  await ex
    .insertInto('outbox')
    .values({ user_id: userId, kind: event.kind, payload: JSON.stringify(event), created_at: at, delivered_at: null })
    .execute();
  await notifyOnCommit(ex, EVENTS_CHANNEL);
  const executor = ex.getExecutor();
  if (ex.isTransaction) recordedIn.add(executor);
  else announcers.get(executor)?.announce();
}

/** Executors of the transactions that recorded events: those announce them once committed. */
const recordedIn = new WeakSet<object>();
/** The announcer of each database handle made by `announcingCommits` (by its executor), for events recorded outside a transaction. */
const announcers = new WeakMap<object, CommittedEvents>();

/** A consumer's interest in committed events; `ready` once notifications from other processes are listened for too. */
export interface EventSubscription {
  ready: Promise<void>;
  close(): Promise<void>;
}

/**
 * Tells the consumers of the outbox (the bot's push loop) that events were committed, so they need
 * not wait for their next poll: events of this process are announced right after their commit, those
 * of other processes through `listen` (Postgres notifications), which is started for the first
 * subscriber and stopped after the last.
 */
export class CommittedEvents {
  readonly #listeners = new Set<() => void>();
  readonly #listen?: (announce: () => void) => Listener;
  #elsewhere?: Listener;

  constructor(listen?: (announce: () => void) => Listener) {
    this.#listen = listen;
  }

  /** Runs right after a commit: a listener that throws must not turn a committed operation into a failed one. */
  readonly announce = (): void => {
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch {
        // A wake that failed leaves the event to the next poll.
      }
    }
  };

  subscribe(listener: () => void): EventSubscription {
    const own = () => listener();
    this.#listeners.add(own);
    if (this.#listen && !this.#elsewhere) this.#elsewhere = this.#listen(this.announce);
    return {
      ready: this.#elsewhere?.ready ?? Promise.resolve(),
      close: async () => {
        this.#listeners.delete(own);
        if (this.#listeners.size === 0) await this.close();
      },
    };
  }

  /** Stops listening to other processes (the subscribers hear nothing more from them). */
  async close(): Promise<void> {
    const elsewhere = this.#elsewhere;
    this.#elsewhere = undefined;
    await elsewhere?.close();
  }
}

/**
 * The database handle to give the core: the same one, except that a transaction in which events were
 * recorded announces them to `events` once it has committed (never when it rolled back). One place
 * for every operation that records events, whichever core module runs it.
 */
export function announcingCommits(db: Db, events: CommittedEvents): Db {
  announcers.set(db.getExecutor(), events);
  // Bound to the handle itself: Kysely's methods read private fields, which a proxy does not have.
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(db, {
    get(target, property) {
      if (property === 'transaction') return () => announcingTransaction(target.transaction(), events);
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? getOrCreate(bound, property, () => value.bind(target)) : value;
    },
  });
}

function announcingTransaction(builder: TransactionBuilder<Database>, events: CommittedEvents): TransactionBuilder<Database> {
  const announcing: Pick<TransactionBuilder<Database>, 'execute' | 'setAccessMode' | 'setIsolationLevel'> = {
    setAccessMode: (mode) => announcingTransaction(builder.setAccessMode(mode), events),
    setIsolationLevel: (level) => announcingTransaction(builder.setIsolationLevel(level), events),
    async execute<T>(callback: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
      let executor: object | undefined;
      const result = await builder.execute((trx) => {
        executor = trx.getExecutor();
        return callback(trx);
      });
      if (executor && recordedIn.has(executor)) events.announce();
      return result;
    },
  };
  return announcing as TransactionBuilder<Database>;
}

/** The outbox as a queue: undelivered rows, oldest first. */
const OUTBOX: Queue = { table: 'outbox', key: ['seq'], work: () => sql`delivered_at is null`, order: ['seq'] };

const toPending = (row: OutboxRow): PendingEvent => ({ seq: row.seq, userId: row.user_id, event: JSON.parse(row.payload) as CoreEvent });

/**
 * The outbox as a consumer (the bot) reads it: oldest undelivered first, marked once delivered.
 * Several consumers (bot processes) share it by claiming the events each works on (`claim`).
 */
export function createEventOutbox(db: Db, committed?: CommittedEvents) {
  return {
    async pending(limit = 100): Promise<PendingEvent[]> {
      const rows: OutboxRow[] = await db
        .selectFrom('outbox')
        .selectAll()
        .where('delivered_at', 'is', null)
        .orderBy('seq')
        .limit(limit)
        .execute();
      return rows.map(toPending);
    },
    /** Up to `limit` undelivered events no other consumer holds, oldest first, held for `claimant` until delivered or released. */
    claim(claimant: Claimant, limit = 50): Promise<Claim<PendingEvent>> {
      return claimRows(db, OUTBOX, claimant, limit, toPending);
    },
    /** How many events wait to be delivered, counted up to `max`: a look that stays cheap however far behind the push is. */
    async waiting(max: number): Promise<number> {
      const row = await db
        .selectFrom((eb) => eb.selectFrom('outbox').select('seq').where('delivered_at', 'is', null).limit(max).as('waiting'))
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async markDelivered(seq: number, at: Date): Promise<void> {
      await db.updateTable('outbox').set({ delivered_at: at.toISOString() }).where('seq', '=', seq).execute();
    },
    /** Calls `listener` whenever events were committed, by this process or (on Postgres) another. */
    onCommitted(listener: () => void): EventSubscription {
      return committed?.subscribe(listener) ?? { ready: Promise.resolve(), close: async () => undefined };
    },
  };
}

export type EventOutbox = ReturnType<typeof createEventOutbox>;
