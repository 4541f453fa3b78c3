import type BetterSqlite3 from 'better-sqlite3';
import type { QueryResult } from 'kysely';
import { FileLock } from './file-lock.js';
import type { Flusher } from './flusher.js';
import { StatementCache } from './statement-cache.js';

// Over 300 lines: the writer's queue, its batches and their commit are one state machine, kept in one class.

export interface GroupCommitOptions {
  /** At most this many operations share one commit (1: a commit of its own for each). */
  maxOperations?: number;
  /** A batch takes no newcomer once it has been open this long (milliseconds). */
  maxOpenMs?: number;
}

/** What the group commit has done so far (for tests, benchmarks and metrics). */
export interface GroupCommitStats {
  /** Commits of batches (each one flush). */
  commits: number;
  /** Operations those commits carried. */
  operations: number;
  /** The most operations one commit carried. */
  largest: number;
}

/** A Kysely connection taking the writer while it runs a statement or a transaction (`driver.ts`). */
export interface WriterConnection {
  /** Set while this connection is a batch member whose transaction is under way. */
  member: { savepoint: string; batch: Batch } | undefined;
}

const BEGIN = 'begin immediate';
const MEMBER_SAVEPOINT = 'member';
/** How long closing waits for the work under way to finish. */
const DRAIN_MS = 5_000;

/** One open `BEGIN IMMEDIATE` transaction shared by its members, and the promise of its commit. */
export class Batch {
  members = 0;
  readonly openedAt = performance.now();
  /** Set once the event loop has had a turn since the batch opened: commit when no member runs. */
  due = false;
  scheduled = false;
  readonly committed: Promise<void>;
  settle!: (error?: unknown) => void;

  constructor() {
    this.committed = new Promise<void>((resolve, reject) => {
      this.settle = (error) => (error === undefined ? resolve() : reject(error));
    });
    // A batch nobody waits on (every member rolled back) must not report an unhandled rejection.
    this.committed.catch(() => undefined);
  }
}

interface Waiter {
  connection: WriterConnection;
  kind: 'member' | 'alone';
  go: () => void;
  fail: (error: unknown) => void;
}

/**
 * The writer connection, taken in turns. **Group commit**: the writes under way at one moment share one
 * `BEGIN IMMEDIATE` transaction and one commit, so one flush makes many operations durable. Each Kysely
 * transaction (and each write outside one) is a member of the batch in a savepoint of its own: its
 * rollback undoes its own writes only, and its commit is reported once the batch's commit has returned
 * (and, with a `Flusher`, been flushed), never before. A lone write is committed at once (after the I/O
 * already received in this turn of the event loop has had its chance to join); a batch is capped in
 * members and in time. A failure of the batch as a whole (the disk, SQLite rolling the transaction back)
 * fails every member not yet reported: nothing a caller was told is done is lost. Statements that must
 * run alone (schema changes, pragmas, raw transactions) wait until no batch is open.
 */
export class GroupCommit {
  readonly statements: StatementCache;
  readonly #queue: Waiter[] = [];
  readonly #maxOperations: number;
  readonly #maxOpenMs: number;
  readonly #stats: GroupCommitStats;
  /** The connection running on the writer now: a member under way, or a statement or raw transaction alone. */
  #holder: WriterConnection | undefined;
  #batch: Batch | undefined;
  /** This process's other writers of the file wait for it (`FileLock`). */
  readonly #file: FileLock;

  constructor(
    readonly database: BetterSqlite3.Database,
    private readonly flusher: Flusher | undefined,
    options: { groupCommit?: GroupCommitOptions | undefined; stats?: GroupCommitStats | undefined },
  ) {
    this.statements = new StatementCache(database);
    this.#maxOperations = Math.max(1, options.groupCommit?.maxOperations ?? 256);
    this.#maxOpenMs = options.groupCommit?.maxOpenMs ?? 20;
    this.#stats = options.stats ?? { commits: 0, operations: 0, largest: 0 };
    this.#file = new FileLock(database, () => this.#next());
  }

  /** Whether `connection` has the writer (a member under way, or a raw transaction it began). */
  holds(connection: WriterConnection): boolean {
    return this.#holder === connection;
  }

  /** A statement of the connection holding the writer. */
  async continue(connection: WriterConnection, sql: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>> {
    const result = this.#onWriter(sql, parameters);
    // The end of a raw transaction (a member's commit is the batch's).
    if (!connection.member && !this.database.inTransaction) await this.flusher?.committed();
    return result;
  }

  /** A write outside a transaction: a batch member of its own. */
  async write(connection: WriterConnection, sql: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>> {
    await this.#enter(connection, 'member');
    let result: QueryResult<unknown>;
    try {
      result = this.#onWriter(sql, parameters);
    } catch (error) {
      this.#leave(connection, false);
      throw error;
    }
    await this.#leave(connection, true).committed;
    return result;
  }

  /** A statement with no batch open: a schema change, a pragma, a raw transaction's `begin` (which keeps the writer). */
  async alone(connection: WriterConnection, sql: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>> {
    await this.#enter(connection, 'alone');
    let result: QueryResult<unknown>;
    let ended = true;
    try {
      result = this.statements.run(sql, parameters);
    } finally {
      // A raw `begin` keeps the writer for this connection until its transaction ends.
      ended = !this.database.inTransaction;
      if (ended) {
        this.#holder = undefined;
        this.#next();
      }
    }
    if (ended) await this.flusher?.committed();
    return result;
  }

  /** A Kysely transaction begins: `connection` joins the batch. */
  async join(connection: WriterConnection): Promise<void> {
    await this.#enter(connection, 'member');
  }

  /** Keeps a member's writes; resolves once the batch's commit has. */
  async keep(connection: WriterConnection): Promise<void> {
    // A member whose batch failed was told so already (its commit rejected); nothing is left to end.
    if (!connection.member) return;
    await this.#leave(connection, true).committed;
  }

  /** Undoes a member's writes, and its part in the batch. */
  undo(connection: WriterConnection): void {
    if (connection.member) this.#leave(connection, false);
  }

  /** Kysely is done with `connection`: whatever it left open is undone, and the writer handed on. */
  release(connection: WriterConnection): void {
    this.undo(connection);
    if (this.#holder === connection) {
      // A raw transaction left open (a `begin` never ended) must not swallow the next statements.
      if (this.database.inTransaction) this.statements.run('rollback');
      this.#holder = undefined;
      this.#next();
    }
  }

  /**
   * Finishes what is under way (an open batch, writes waiting for the next one) before the handle closes:
   * its callers have been told nothing yet. Bounded, for a transaction that never ends.
   */
  async drain(): Promise<void> {
    const until = performance.now() + DRAIN_MS;
    while ((this.#batch || this.#holder || this.#queue.length > 0) && performance.now() < until) {
      if (this.#batch && this.#holder === undefined) this.#batch.due = true;
      this.#next();
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (this.#batch && this.#holder === undefined) this.#commit(this.#batch);
    this.#holder = undefined;
    this.#batch = undefined;
    this.#releaseFile();
  }

  /** A statement of the connection holding the writer; a failure that ended the whole transaction fails its batch. */
  #onWriter(sql: string, parameters: readonly unknown[]): QueryResult<unknown> {
    try {
      return this.statements.run(sql, parameters);
    } catch (error) {
      if (this.#batch && !this.database.inTransaction) this.#fail(this.#batch, error);
      throw error;
    }
  }

  /** Takes the writer for `connection`: at once when it is free for that kind of work, else in its turn. */
  #enter(connection: WriterConnection, kind: Waiter['kind']): Promise<void> | undefined {
    const free =
      this.#holder === undefined &&
      (kind === 'member' ? this.#accepting() : this.#batch === undefined && this.#queue.length === 0 && this.#file.free());
    if (free) {
      this.#grant(connection, kind);
      return undefined;
    }
    return new Promise((go, fail) => this.#queue.push({ connection, kind, go, fail }));
  }

  /** Whether a new member may start now: into the open batch while it takes newcomers, or a new batch. */
  #accepting(): boolean {
    const batch = this.#batch;
    if (!batch) return this.#queue.length === 0 && this.#file.free();
    return !batch.due && batch.members < this.#maxOperations && performance.now() - batch.openedAt < this.#maxOpenMs;
  }

  #grant(connection: WriterConnection, kind: Waiter['kind']): void {
    this.flusher?.check();
    this.#file.take();
    if (kind === 'alone') {
      this.#holder = connection;
      return;
    }
    if (!this.#batch) {
      this.statements.run(BEGIN);
      this.#batch = new Batch();
    }
    // One name serves every member: members take turns, each released or undone before the next begins
    // (and a name of its own for each would be a statement to prepare for each).
    const savepoint = MEMBER_SAVEPOINT;
    this.statements.run(`savepoint ${savepoint}`);
    this.#batch.members++;
    connection.member = { savepoint, batch: this.#batch };
    this.#holder = connection;
  }

  /** Ends a member's part: kept (released into the batch) or undone; returns its batch, to wait for the commit. */
  #leave(connection: WriterConnection, keep: boolean): Batch {
    const { savepoint, batch } = connection.member!;
    connection.member = undefined;
    if (this.#holder === connection) this.#holder = undefined;
    if (this.#batch === batch) {
      try {
        if (!keep) this.statements.run(`rollback to ${savepoint}`);
        this.statements.run(`release ${savepoint}`);
        if (!keep) batch.members--;
      } catch (error) {
        if (!this.database.inTransaction) this.#fail(batch, error);
        else throw error;
      }
    }
    this.#next();
    return batch;
  }

  /** Hands the writer on: to a waiting member while the batch takes newcomers, else commits, then serves the queue. */
  #next(): void {
    while (this.#holder === undefined) {
      const batch = this.#batch;
      if (batch) {
        if (this.#accepting()) {
          const index = this.#queue.findIndex((w) => w.kind === 'member');
          if (index >= 0) {
            this.#start(this.#queue.splice(index, 1)[0]!);
            continue;
          }
          if (batch.members === 0) {
            // Every member so far rolled back: there is nothing to wait for, nor to make durable.
            this.#commit(batch);
            continue;
          }
          if (!batch.scheduled) {
            batch.scheduled = true;
            // Whatever the event loop has already received (other requests) joins before the commit.
            setImmediate(() => {
              batch.due = true;
              if (this.#batch === batch && this.#holder === undefined && this.database.open) this.#next();
            });
          }
          return;
        }
        this.#commit(batch);
      }
      this.#releaseFile();
      if (this.#queue.length === 0 || !this.#file.free()) return;
      this.#start(this.#queue.shift()!);
    }
  }

  /** Lets go of the file once nothing of this writer's is open on it. */
  #releaseFile(): void {
    if (!this.#batch && !this.#holder) this.#file.release();
  }

  #start(waiter: Waiter): void {
    try {
      this.#grant(waiter.connection, waiter.kind);
    } catch (error) {
      waiter.fail(error);
      return;
    }
    waiter.go();
  }

  #commit(batch: Batch): void {
    this.#batch = undefined;
    if (batch.members === 0) {
      // Every member rolled back: nothing to make durable.
      this.statements.run('rollback');
      batch.settle();
      return;
    }
    try {
      this.statements.run('commit');
    } catch (error) {
      if (this.database.inTransaction) this.statements.run('rollback');
      batch.settle(error);
      return;
    }
    this.#stats.commits++;
    this.#stats.operations += batch.members;
    this.#stats.largest = Math.max(this.#stats.largest, batch.members);
    if (!this.flusher) batch.settle();
    else
      this.flusher.committed().then(
        () => batch.settle(),
        (error: unknown) => batch.settle(error),
      );
  }

  /** The batch's transaction is gone (SQLite rolled it back): none of its members is durable. */
  #fail(batch: Batch, error: unknown): void {
    if (this.#batch === batch) this.#batch = undefined;
    batch.settle(error);
  }
}
