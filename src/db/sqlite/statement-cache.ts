import type BetterSqlite3 from 'better-sqlite3';
import type { QueryResult } from 'kysely';

/** How many prepared statements (and statement kinds, `driver.ts`) are kept per connection. */
export const MAX_CACHED_STATEMENTS = 500;

/** A statement prepared once, and for one that returns rows, what makes each row an object. */
interface Prepared {
  statement: BetterSqlite3.Statement;
  row: ((values: unknown[]) => Record<string, unknown>) | undefined;
}

/**
 * One connection's statements, each prepared once and kept (Kysely's own driver prepares every statement
 * anew): at most `MAX_CACHED_STATEMENTS`, the oldest dropped first.
 */
export class StatementCache {
  readonly #cache = new Map<string, Prepared>();
  constructor(readonly database: BetterSqlite3.Database) {}

  get(sql: string): BetterSqlite3.Statement {
    return this.#prepared(sql).statement;
  }

  run(sql: string, parameters: readonly unknown[] = []): QueryResult<unknown> {
    const { statement, row } = this.#prepared(sql);
    if (row) return { rows: (statement.all(parameters) as unknown[][]).map(row) };
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  #prepared(sql: string): Prepared {
    const cached = this.#cache.get(sql);
    if (cached) return cached;
    const statement = this.database.prepare(sql);
    // Rows come as arrays and are made objects here: better-sqlite3 builds an object by looking each column's
    // name up anew for every row, which cost a one-row read about a quarter of its time (docs/performance.md).
    const row = statement.reader ? rowMaker(columnNames(statement.raw(true))) : undefined;
    if (this.#cache.size >= MAX_CACHED_STATEMENTS) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    const prepared = { statement, row };
    this.#cache.set(sql, prepared);
    return prepared;
  }
}

/**
 * What makes a row of these columns an object, as better-sqlite3 makes it: a key per name in column order, a
 * later column of the same name taking the key's value. Compiled once per statement to one object literal, so
 * every row has the same shape; the names are JSON-quoted, so any name is only a key. A column named
 * `__proto__`, which a literal would take as the prototype, gets an own key by the plain loop.
 */
export function rowMaker(names: readonly string[]): (values: unknown[]) => Record<string, unknown> {
  if (names.includes('__proto__')) {
    return (values) => {
      const row: Record<string, unknown> = {};
      for (const [i, name] of names.entries()) {
        Object.defineProperty(row, name, { value: values[i], writable: true, enumerable: true, configurable: true });
      }
      return row;
    };
  }
  const fields = names.map((name, i) => `${JSON.stringify(name)}: values[${i}]`).join(', ');
  return new Function('values', `return { ${fields} };`) as (values: unknown[]) => Record<string, unknown>;
}

function columnNames(statement: BetterSqlite3.Statement): string[] {
  return statement.columns().map((column) => column.name);
}
