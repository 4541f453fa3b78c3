import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type QueryResult,
} from 'kysely';

const MAX_CACHED_STATEMENTS = 500;

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

export interface SqliteDialectOptions {
  /**
   * A second connection to the same file, for statements that only read outside a transaction: they
   * then see the last commit at once, never waiting for the writes under way (`openSqliteReader`).
   * Without one (an in-memory database) they wait until no batch is open.
   */
  reader?: BetterSqlite3.Database;
  groupCommit?: GroupCommitOptions;
  /** Filled in as batches commit. */
  stats?: GroupCommitStats;
  /**
   * Makes every commit so far durable (`keepWal`). Given, the writer commits without waiting for the
   * disk (`synchronous = NORMAL`: the commit is written to the WAL, not flushed), and the flush runs off
   * the main thread while the next batch goes on; nobody hears of a commit, by its result or by a read
   * that sees it, before a flush that began after it has ended. Without it, each commit flushes itself.
   */
  flush?: () => Promise<void>;
  /** Told once, when a flush fails: from then on nothing can be made durable (see `Flusher`). */
  onFlushFailed?: (error: unknown) => void;
}

/**
 * Kysely's dialect for one better-sqlite3 file, in place of Kysely's `SqliteDialect` (which prepares
 * every statement anew and queues every statement behind one lock). Here:
 * - statements are prepared once and kept;
 * - **group commit**: the writes under way at one moment share one `BEGIN IMMEDIATE` transaction
 *   and one commit, so one flush makes many operations durable. Each Kysely transaction (and each
 *   write outside one) is a member of the batch in a savepoint of its own: its rollback undoes its
 *   own writes only, and its commit is reported once the batch's commit has returned, never before.
 *   A lone write is committed at once (after the I/O already received in this turn of the event loop
 *   has had its chance to join); a batch is capped in members and in time;
 * - a failure of the batch as a whole (the disk, SQLite rolling the transaction back) fails every
 *   member not yet reported: nothing a caller was told is done is lost;
 * - with `flush`, a batch's flush runs while the next batch works (see `Flusher`): the main thread
 *   never stands still for the disk, and reads wait for the flush of any commit they may have seen;
 * - statements that only read, outside a transaction, go to `reader` and never wait for writes;
 *   schema changes, pragmas and raw transactions run alone, with no batch open.
 *
 * @example new Kysely<Database>({ dialect: sqliteDialect(openSqlite(file), { reader: openSqliteReader(file) }) })
 */
export function sqliteDialect(database: BetterSqlite3.Database, options: SqliteDialectOptions = {}): SqliteDialect {
  const driver = new SqliteDriver(database, options);
  return {
    readNow: (sql, parameters) => driver.readNow(sql, parameters),
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => driver,
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
}

export interface SqliteDialect extends Dialect {
  /**
   * The rows of a statement that only reads, from the reader at once, or `undefined` when it must take
   * the usual way (it writes, or there is no reader). For the reads on every request (`compiledOnce`):
   * Kysely's executor around a statement costs about as much as the statement itself.
   */
  readNow(sql: string, parameters: readonly unknown[]): unknown[] | undefined;
}

const BEGIN = 'begin immediate';
const MEMBER_SAVEPOINT = 'member';
/** How long closing waits for the work under way to finish. */
const DRAIN_MS = 5_000;

/** What Kysely holds while it runs a statement or a transaction. */
class Turn implements DatabaseConnection {
  /** Set while this turn is a batch member whose transaction is under way. */
  member: { savepoint: string; batch: Batch } | undefined;

  constructor(private readonly driver: SqliteDriver) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.driver.execute(this, query) as Promise<QueryResult<R>>;
  }

  /** Reads the rows at once, then hands them out one by one (nothing here streams large results). */
  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    const { rows } = await this.executeQuery<R>(query);
    for (const row of rows) yield { rows: [row] };
  }
}

/** One open `BEGIN IMMEDIATE` transaction shared by its members, and the promise of its commit. */
class Batch {
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

/**
 * Durability after the fact, for a writer that commits without flushing: one flush at a time, each
 * covering every commit made before it began (a later commit waits for the next one). Once a flush
 * has failed, nothing is durable any more and every wait fails: the process must stop and restart, as
 * Postgres does after a failed fsync.
 */
class Flusher {
  #made = 0;
  #durable = 0;
  #running = false;
  #failed: { error: unknown } | undefined;
  readonly #waiting: { upTo: number; resolve: () => void; reject: (error: unknown) => void }[] = [];

  constructor(
    private readonly flush: () => Promise<void>,
    private readonly onFailure: (error: unknown) => void = () => undefined,
  ) {}

  /** Whether some commit is not yet durable. */
  get pending(): boolean {
    return this.#made > this.#durable;
  }

  /** Counts a commit just made; resolves once it is durable. */
  committed(): Promise<void> {
    return this.#until(++this.#made);
  }

  /** Resolves once every commit made so far is durable. */
  settled(): Promise<void> {
    return this.#until(this.#made);
  }

  /** Throws the failure of an earlier flush: nothing more may be committed. */
  check(): void {
    if (this.#failed) throw this.#failed.error;
  }

  #until(upTo: number): Promise<void> {
    if (this.#failed) return Promise.reject(this.#failed.error);
    if (upTo <= this.#durable) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => this.#waiting.push({ upTo, resolve, reject }));
    this.#run();
    return done;
  }

  #run(): void {
    if (this.#running) return;
    this.#running = true;
    const upTo = this.#made;
    this.flush().then(
      () => {
        this.#running = false;
        this.#durable = upTo;
        const waiting = this.#waiting.splice(0);
        for (const waiter of waiting) {
          if (waiter.upTo <= upTo) waiter.resolve();
          else this.#waiting.push(waiter);
        }
        if (this.#waiting.length > 0) this.#run();
      },
      (error: unknown) => {
        this.#running = false;
        this.#failed = { error };
        for (const waiter of this.#waiting.splice(0)) waiter.reject(error);
        this.onFailure(error);
      },
    );
  }
}

/**
 * How a statement outside a transaction runs: a read on the reader; a write as a batch member of its
 * own; anything else (schema, pragma, raw transaction control) alone.
 */
type Kind = 'read' | 'write' | 'alone';

interface Waiter {
  turn: Turn;
  kind: 'member' | 'alone';
  go: () => void;
  fail: (error: unknown) => void;
}

class Statements {
  readonly #cache = new Map<string, BetterSqlite3.Statement>();
  constructor(readonly database: BetterSqlite3.Database) {}

  get(sql: string): BetterSqlite3.Statement {
    const cached = this.#cache.get(sql);
    if (cached) return cached;
    const statement = this.database.prepare(sql);
    if (this.#cache.size >= MAX_CACHED_STATEMENTS) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    this.#cache.set(sql, statement);
    return statement;
  }

  run(sql: string, parameters: readonly unknown[] = []): QueryResult<unknown> {
    const statement = this.get(sql);
    if (statement.reader) return { rows: statement.all(parameters) };
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }
}

/**
 * The drivers of this process that write each file, and which of them holds its write lock (a batch or a
 * raw transaction open). Two connections of one process writing one file (two cores in one test, the
 * admin command line run in-process) must not meet in SQLite's busy handler: it sleeps synchronously, so
 * the holder's batch, waiting for the event loop to commit, would never get to, and the other would
 * time out. So within a process the second waits its turn here, without blocking.
 */
const fileLocks = new Map<string, { holder: object; waiting: Set<() => void> }>();

const TRANSACTION_CONTROL = /^\s*(begin|commit|end|rollback|savepoint|release)\b/i;
const DATA_CHANGE = /^\s*(insert|update|delete|replace|with)\b/i;

class SqliteDriver implements Driver {
  readonly #writer: Statements;
  readonly #reader: Statements | undefined;
  readonly #kinds = new Map<string, Kind>();
  readonly #idle: Turn[] = [];
  readonly #queue: Waiter[] = [];
  readonly #maxOperations: number;
  readonly #maxOpenMs: number;
  readonly #stats: GroupCommitStats;
  readonly #flusher: Flusher | undefined;
  /** The turn running on the writer now: a member under way, or a statement or raw transaction alone. */
  #holder: Turn | undefined;
  #batch: Batch | undefined;
  /** The file, for the in-process write lock (`fileLocks`); none for an in-memory database. */
  readonly #file: string | undefined;
  readonly #wake = () => this.#next();

  constructor(
    private readonly database: BetterSqlite3.Database,
    options: SqliteDialectOptions,
  ) {
    this.#writer = new Statements(database);
    this.#reader = options.reader ? new Statements(options.reader) : undefined;
    this.#maxOperations = Math.max(1, options.groupCommit?.maxOperations ?? 256);
    this.#maxOpenMs = options.groupCommit?.maxOpenMs ?? 20;
    this.#stats = options.stats ?? { commits: 0, operations: 0, largest: 0 };
    this.#file = database.memory ? undefined : path.resolve(database.name);
    if (options.flush) {
      // Only in WAL mode does NORMAL keep the file whole at a crash, losing at most the unflushed commits.
      if (database.pragma('journal_mode', { simple: true }) !== 'wal') throw new Error('sqliteDialect: flush needs WAL mode');
      database.pragma('synchronous = NORMAL');
      this.#flusher = new Flusher(options.flush, options.onFlushFailed);
    }
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<Turn> {
    return this.#idle.pop() ?? new Turn(this);
  }

  async releaseConnection(turn: Turn): Promise<void> {
    if (turn.member) this.#leave(turn, false);
    if (this.#holder === turn) {
      // A raw transaction left open (a `begin` never ended) must not swallow the next statements.
      if (this.database.inTransaction) this.#writer.run('rollback');
      this.#holder = undefined;
      this.#next();
    }
    this.#idle.push(turn);
  }

  async beginTransaction(turn: Turn): Promise<void> {
    await this.#enter(turn, 'member');
  }

  async commitTransaction(turn: Turn): Promise<void> {
    // A member whose batch failed was told so already (its commit rejected); nothing is left to end.
    if (!turn.member) return;
    await this.#leave(turn, true).committed;
  }

  async rollbackTransaction(turn: Turn): Promise<void> {
    if (turn.member) this.#leave(turn, false);
  }

  async savepoint(turn: Turn, name: string): Promise<void> {
    await this.execute(turn, CompiledQuery.raw(`savepoint ${quoted(name)}`));
  }

  async rollbackToSavepoint(turn: Turn, name: string): Promise<void> {
    await this.execute(turn, CompiledQuery.raw(`rollback to ${quoted(name)}`));
  }

  async releaseSavepoint(turn: Turn, name: string): Promise<void> {
    await this.execute(turn, CompiledQuery.raw(`release ${quoted(name)}`));
  }

  async destroy(): Promise<void> {
    // What is under way when the handle closes (an open batch, writes waiting for the next one) is
    // finished first: its callers have been told nothing yet. Bounded, for a transaction that never ends.
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
    // Commits whose flush is under way or due: their callers are still waiting to hear.
    await this.#flusher?.settled().catch(() => undefined);
    this.#reader?.database.close();
    this.database.close();
  }

  readNow(sql: string, parameters: readonly unknown[]): unknown[] | undefined {
    // While a commit is not yet durable, a read must wait for it (`execute`).
    if (!this.#reader || this.#flusher?.pending || this.#kindOf(sql) !== 'read') return undefined;
    return this.#reader.run(sql, parameters).rows;
  }

  async execute(turn: Turn, query: CompiledQuery): Promise<QueryResult<unknown>> {
    const parameters = query.parameters as readonly unknown[];
    if (this.#holder === turn) {
      const result = this.#onWriter(query.sql, parameters);
      // The end of a raw transaction (a member's commit is the batch's).
      if (!turn.member && !this.database.inTransaction) await this.#flusher?.committed();
      return result;
    }
    const kind = this.#kindOf(query.sql);
    if (kind === 'read' && this.#reader) {
      const result = this.#reader.run(query.sql, parameters);
      // It may have seen a commit not yet durable: what it tells must not be lost to a power cut.
      if (this.#flusher?.pending) await this.#flusher.settled();
      return result;
    }
    if (kind === 'write') {
      await this.#enter(turn, 'member');
      let result: QueryResult<unknown>;
      try {
        result = this.#onWriter(query.sql, parameters);
      } catch (error) {
        this.#leave(turn, false);
        throw error;
      }
      await this.#leave(turn, true).committed;
      return result;
    }
    await this.#enter(turn, 'alone');
    let result: QueryResult<unknown>;
    let ended = true;
    try {
      result = this.#writer.run(query.sql, parameters);
    } finally {
      // A raw `begin` keeps the writer for this turn until its transaction ends.
      ended = !this.database.inTransaction;
      if (ended) {
        this.#holder = undefined;
        this.#next();
      }
    }
    if (ended) await this.#flusher?.committed();
    return result;
  }

  /** A statement of the turn holding the writer; a failure that ended the whole transaction fails its batch. */
  #onWriter(sql: string, parameters: readonly unknown[]): QueryResult<unknown> {
    try {
      return this.#writer.run(sql, parameters);
    } catch (error) {
      if (this.#batch && !this.database.inTransaction) this.#fail(this.#batch, error);
      throw error;
    }
  }

  #kindOf(sql: string): Kind {
    let kind = this.#kinds.get(sql);
    if (kind === undefined) {
      if (TRANSACTION_CONTROL.test(sql)) kind = 'alone';
      else if (this.#writer.get(sql).readonly) kind = 'read';
      else kind = DATA_CHANGE.test(sql) ? 'write' : 'alone';
      if (this.#kinds.size >= MAX_CACHED_STATEMENTS) this.#kinds.clear();
      this.#kinds.set(sql, kind);
    }
    return kind;
  }

  /** Takes the writer for `turn`: at once when it is free for that kind of work, else in its turn. */
  #enter(turn: Turn, kind: Waiter['kind']): Promise<void> | undefined {
    const free =
      this.#holder === undefined &&
      (kind === 'member' ? this.#accepting() : this.#batch === undefined && this.#queue.length === 0 && this.#fileFree());
    if (free) {
      this.#grant(turn, kind);
      return undefined;
    }
    return new Promise((go, fail) => this.#queue.push({ turn, kind, go, fail }));
  }

  /** Whether a new member may start now: into the open batch while it takes newcomers, or a new batch. */
  #accepting(): boolean {
    const batch = this.#batch;
    if (!batch) return this.#queue.length === 0 && this.#fileFree();
    return !batch.due && batch.members < this.#maxOperations && performance.now() - batch.openedAt < this.#maxOpenMs;
  }

  #grant(turn: Turn, kind: Waiter['kind']): void {
    this.#flusher?.check();
    this.#takeFile();
    if (kind === 'alone') {
      this.#holder = turn;
      return;
    }
    if (!this.#batch) {
      this.#writer.run(BEGIN);
      this.#batch = new Batch();
    }
    // One name serves every member: members take turns, each released or undone before the next begins
    // (and a name of its own for each would be a statement to prepare for each).
    const savepoint = MEMBER_SAVEPOINT;
    this.#writer.run(`savepoint ${savepoint}`);
    this.#batch.members++;
    turn.member = { savepoint, batch: this.#batch };
    this.#holder = turn;
  }

  /** Ends a member's part: kept (released into the batch) or undone; returns its batch, to wait for the commit. */
  #leave(turn: Turn, keep: boolean): Batch {
    const { savepoint, batch } = turn.member!;
    turn.member = undefined;
    if (this.#holder === turn) this.#holder = undefined;
    if (this.#batch === batch) {
      try {
        if (!keep) this.#writer.run(`rollback to ${savepoint}`);
        this.#writer.run(`release ${savepoint}`);
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
      if (this.#queue.length === 0 || !this.#fileFree()) return;
      this.#start(this.#queue.shift()!);
    }
  }

  /** Whether no other driver of this process holds this file's write lock; if one does, this one is woken when it lets go. */
  #fileFree(): boolean {
    const lock = this.#file === undefined ? undefined : fileLocks.get(this.#file);
    if (!lock || lock.holder === this) return true;
    lock.waiting.add(this.#wake);
    return false;
  }

  #takeFile(): void {
    if (this.#file === undefined) return;
    const lock = fileLocks.get(this.#file);
    if (!lock) fileLocks.set(this.#file, { holder: this, waiting: new Set() });
    else lock.holder = this;
  }

  /** Lets go of the file once nothing of this driver's is open on it, waking the drivers that waited. */
  #releaseFile(): void {
    const lock = this.#file === undefined ? undefined : fileLocks.get(this.#file);
    if (!lock || lock.holder !== this || this.#batch || this.#holder) return;
    fileLocks.delete(this.#file!);
    for (const wake of lock.waiting) queueMicrotask(wake);
  }

  #start(waiter: Waiter): void {
    try {
      this.#grant(waiter.turn, waiter.kind);
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
      this.#writer.run('rollback');
      batch.settle();
      return;
    }
    try {
      this.#writer.run('commit');
    } catch (error) {
      if (this.database.inTransaction) this.#writer.run('rollback');
      batch.settle(error);
      return;
    }
    this.#stats.commits++;
    this.#stats.operations += batch.members;
    this.#stats.largest = Math.max(this.#stats.largest, batch.members);
    if (!this.#flusher) batch.settle();
    else
      this.#flusher.committed().then(
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

function quoted(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}
