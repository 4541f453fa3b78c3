import type BetterSqlite3 from 'better-sqlite3';
import { SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, type Dialect } from 'kysely';
import { SqliteDriver } from './driver.js';
import type { GroupCommitOptions, GroupCommitStats } from './group-commit.js';

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

export interface SqliteDialect extends Dialect {
  /**
   * The rows of a statement that only reads, from the reader at once, or `undefined` when it must take
   * the usual way (it writes, or there is no reader). For the reads on every request (`compiledOnce`):
   * Kysely's executor around a statement costs about as much as the statement itself.
   */
  readNow(sql: string, parameters: readonly unknown[]): unknown[] | undefined;
}

/**
 * Kysely's dialect for one better-sqlite3 file, in place of Kysely's `SqliteDialect` (which prepares
 * every statement anew and queues every statement behind one lock). Here:
 * - statements are prepared once and kept (`StatementCache`);
 * - **group commit** (`GroupCommit`): the writes under way at one moment share one transaction and one
 *   commit, each in a savepoint of its own, and each told of its commit once the batch's has returned;
 * - with `flush`, a batch's flush runs while the next batch works (`Flusher`): the main thread never
 *   stands still for the disk, and reads wait for the flush of any commit they may have seen;
 * - statements that only read, outside a transaction, go to `reader` and never wait for writes;
 *   schema changes, pragmas and raw transactions run alone, with no batch open (`SqliteDriver`).
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
