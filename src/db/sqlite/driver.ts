import type BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';
import type { SqliteDialectOptions } from './dialect.js';
import { Flusher } from './flusher.js';
import { GroupCommit, type WriterConnection } from './group-commit.js';
import { MAX_CACHED_STATEMENTS, StatementCache } from './statement-cache.js';

/**
 * How a statement outside a transaction runs: a read on the reader (without one, alone); a write as a
 * batch member of its own; anything else (schema, pragma, raw transaction control) alone.
 */
type Kind = 'read' | 'write' | 'alone';

const TRANSACTION_CONTROL = /^\s*(begin|commit|end|rollback|savepoint|release)\b/i;
const DATA_CHANGE = /^\s*(insert|update|delete|replace|with)\b/i;

/** What Kysely holds while it runs a statement or a transaction. */
class SqliteConnection implements DatabaseConnection, WriterConnection {
  member: WriterConnection['member'];

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

/**
 * Kysely's driver for one file: reads on the reader, writes and transactions through the group commit
 * (`GroupCommit`), and, given `flush`, nobody told of a commit before it is durable (`Flusher`).
 */
export class SqliteDriver implements Driver {
  readonly #writer: GroupCommit;
  readonly #reader: StatementCache | undefined;
  readonly #flusher: Flusher | undefined;
  readonly #kinds = new Map<string, Kind>();
  readonly #idle: SqliteConnection[] = [];

  constructor(database: BetterSqlite3.Database, options: SqliteDialectOptions) {
    if (options.flush) {
      // Only in WAL mode does NORMAL keep the file whole at a crash, losing at most the unflushed commits.
      if (database.pragma('journal_mode', { simple: true }) !== 'wal') throw new Error('sqliteDialect: flush needs WAL mode');
      database.pragma('synchronous = NORMAL');
      this.#flusher = new Flusher(options.flush, options.onFlushFailed);
    }
    this.#writer = new GroupCommit(database, this.#flusher, options);
    this.#reader = options.reader ? new StatementCache(options.reader) : undefined;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<SqliteConnection> {
    return this.#idle.pop() ?? new SqliteConnection(this);
  }

  async releaseConnection(connection: SqliteConnection): Promise<void> {
    this.#writer.release(connection);
    this.#idle.push(connection);
  }

  async beginTransaction(connection: SqliteConnection): Promise<void> {
    await this.#writer.join(connection);
  }

  async commitTransaction(connection: SqliteConnection): Promise<void> {
    await this.#writer.keep(connection);
  }

  async rollbackTransaction(connection: SqliteConnection): Promise<void> {
    this.#writer.undo(connection);
  }

  async savepoint(connection: SqliteConnection, name: string): Promise<void> {
    await this.execute(connection, CompiledQuery.raw(`savepoint ${quoted(name)}`));
  }

  async rollbackToSavepoint(connection: SqliteConnection, name: string): Promise<void> {
    await this.execute(connection, CompiledQuery.raw(`rollback to ${quoted(name)}`));
  }

  async releaseSavepoint(connection: SqliteConnection, name: string): Promise<void> {
    await this.execute(connection, CompiledQuery.raw(`release ${quoted(name)}`));
  }

  async destroy(): Promise<void> {
    await this.#writer.drain();
    // Commits whose flush is under way or due: their callers are still waiting to hear.
    await this.#flusher?.settled().catch(() => undefined);
    this.#reader?.database.close();
    this.#writer.database.close();
  }

  readNow(sql: string, parameters: readonly unknown[]): unknown[] | undefined {
    // While a commit is not yet durable, a read must wait for it (`execute`).
    if (!this.#reader || this.#flusher?.pending || this.#kindOf(sql) !== 'read') return undefined;
    return this.#reader.run(sql, parameters).rows;
  }

  async execute(connection: SqliteConnection, query: CompiledQuery): Promise<QueryResult<unknown>> {
    const { sql } = query;
    const parameters = query.parameters as readonly unknown[];
    if (this.#writer.holds(connection)) return this.#writer.continue(connection, sql, parameters);
    switch (this.#kindOf(sql)) {
      case 'read':
        return this.#read(sql, parameters);
      case 'write':
        return this.#writer.write(connection, sql, parameters);
      case 'alone':
        return this.#writer.alone(connection, sql, parameters);
    }
  }

  async #read(sql: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>> {
    const result = this.#reader!.run(sql, parameters);
    // It may have seen a commit not yet durable: what it tells must not be lost to a power cut.
    if (this.#flusher?.pending) await this.#flusher.settled();
    return result;
  }

  #kindOf(sql: string): Kind {
    let kind = this.#kinds.get(sql);
    if (kind === undefined) {
      if (TRANSACTION_CONTROL.test(sql)) kind = 'alone';
      else if (this.#writer.statements.isReadonly(sql)) kind = this.#reader ? 'read' : 'alone';
      else kind = DATA_CHANGE.test(sql) ? 'write' : 'alone';
      if (this.#kinds.size >= MAX_CACHED_STATEMENTS) this.#kinds.clear();
      this.#kinds.set(sql, kind);
    }
    return kind;
  }
}

function quoted(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}
