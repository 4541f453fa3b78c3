import type BetterSqlite3 from 'better-sqlite3';
import type { QueryResult } from 'kysely';

/** How many prepared statements (and statement kinds, `driver.ts`) are kept per connection. */
export const MAX_CACHED_STATEMENTS = 500;

/**
 * One connection's statements, each prepared once and kept (Kysely's own driver prepares every statement
 * anew): at most `MAX_CACHED_STATEMENTS`, the oldest dropped first.
 */
export class StatementCache {
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
