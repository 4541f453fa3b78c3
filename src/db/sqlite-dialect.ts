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

/**
 * Kysely's dialect for one better-sqlite3 connection, in place of Kysely's `SqliteDialect`, whose
 * driver prepares every statement anew and queues every statement behind one lock. Here:
 * - statements are prepared once and kept;
 * - a transaction begins IMMEDIATE: it takes the write lock up front and waits out `busy_timeout`,
 *   instead of failing with SQLITE_BUSY half-way when another process writes the same file;
 * - a statement outside a transaction runs at once (better-sqlite3 is synchronous) while no
 *   transaction is open on the connection; while one is, it waits its turn, first come first
 *   served, so it never sees uncommitted writes.
 *
 * @example new Kysely<Database>({ dialect: sqliteDialect(openSqlite(file)) })
 */
export function sqliteDialect(database: BetterSqlite3.Database): Dialect {
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new SqliteDriver(database),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
}

const BEGIN = CompiledQuery.raw('begin immediate');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');

/** What Kysely holds while it runs a statement or a transaction: a turn on the one connection. */
class Turn implements DatabaseConnection {
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

class SqliteDriver implements Driver {
  readonly #statements = new Map<string, BetterSqlite3.Statement>();
  readonly #idle: Turn[] = [];
  /** The turn whose transaction is open, or which is next once it ends; waiting implies one. */
  #holder: Turn | undefined;
  readonly #waiting: { turn: Turn; go: () => void }[] = [];

  constructor(private readonly database: BetterSqlite3.Database) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<Turn> {
    return this.#idle.pop() ?? new Turn(this);
  }

  async releaseConnection(turn: Turn): Promise<void> {
    if (this.#holder === turn) {
      // A transaction left open (a raw `begin` never ended) must not swallow the next statements.
      if (this.database.inTransaction) this.#run(ROLLBACK);
      this.#passTurn();
    }
    this.#idle.push(turn);
  }

  async beginTransaction(turn: Turn): Promise<void> {
    await this.execute(turn, BEGIN);
  }

  async commitTransaction(turn: Turn): Promise<void> {
    await this.execute(turn, COMMIT);
  }

  async rollbackTransaction(turn: Turn): Promise<void> {
    await this.execute(turn, ROLLBACK);
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
    this.database.close();
  }

  async execute(turn: Turn, query: CompiledQuery): Promise<QueryResult<unknown>> {
    const turnTaken = this.#waitFor(turn);
    if (turnTaken) await turnTaken;
    try {
      return this.#run(query);
    } finally {
      this.#settle(turn);
    }
  }

  #run(query: CompiledQuery): QueryResult<unknown> {
    const statement = this.#prepare(query.sql);
    const parameters = query.parameters as unknown[];
    if (statement.reader) return { rows: statement.all(parameters) };
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  #prepare(sql: string): BetterSqlite3.Statement {
    const cached = this.#statements.get(sql);
    if (cached) return cached;
    const statement = this.database.prepare(sql);
    if (this.#statements.size >= MAX_CACHED_STATEMENTS) {
      const oldest = this.#statements.keys().next().value;
      if (oldest !== undefined) this.#statements.delete(oldest);
    }
    this.#statements.set(sql, statement);
    return statement;
  }

  /** Resolves at once unless another turn's transaction is open (or that turn is next). */
  #waitFor(turn: Turn): Promise<void> | undefined {
    if (this.#holder === undefined || this.#holder === turn) return undefined;
    return new Promise((go) => this.#waiting.push({ turn, go }));
  }

  /** After each statement: a turn that opened a transaction holds the connection until it ends. */
  #settle(turn: Turn): void {
    if (this.database.inTransaction) this.#holder = turn;
    else if (this.#holder === turn) this.#passTurn();
  }

  #passTurn(): void {
    const next = this.#waiting.shift();
    this.#holder = next?.turn;
    next?.go();
  }
}

function quoted(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}
