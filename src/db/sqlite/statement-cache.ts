import type BetterSqlite3 from 'better-sqlite3';
import type { QueryResult } from 'kysely';

/** How many prepared statements (and statement kinds, `driver.ts`) are kept per connection. */
export const MAX_CACHED_STATEMENTS = 500;

/** A statement prepared once, and how its rows become objects: by better-sqlite3, by a maker for its columns, or none (it returns no rows). */
interface Prepared {
  statement: BetterSqlite3.Statement;
  rows: 'none' | 'own' | ((values: unknown[]) => Record<string, unknown>);
}

/**
 * One connection's statements, each prepared once and kept (Kysely's own driver prepares every statement
 * anew): at most `MAX_CACHED_STATEMENTS`, the oldest dropped first.
 */
export class StatementCache {
  readonly #cache = new Map<string, Prepared>();
  constructor(readonly database: BetterSqlite3.Database) {}

  /** Whether the statement only reads (better-sqlite3's `readonly`). */
  isReadonly(sql: string): boolean {
    return this.#prepared(sql).statement.readonly;
  }

  run(sql: string, parameters: readonly unknown[] = []): QueryResult<unknown> {
    const { statement, rows } = this.#prepared(sql);
    if (rows === 'none') {
      const { changes, lastInsertRowid } = statement.run(parameters);
      return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
    }
    const found = statement.all(parameters);
    return { rows: rows === 'own' ? found : (found as unknown[][]).map(rows) };
  }

  #prepared(sql: string): Prepared {
    const cached = this.#cache.get(sql);
    if (cached) return cached;
    const statement = this.database.prepare(sql);
    // Rows come as arrays and are made objects here: better-sqlite3 builds an object by looking each column's
    // name up anew for every row, which cost a one-row read about a quarter of its time (docs/performance.md).
    // Only where every column is named in the statement: a `*` takes its columns from the schema, which a
    // migration may change under a prepared statement (SQLite prepares it again; the names kept here would not follow).
    let rows: Prepared['rows'] = 'none';
    if (statement.reader) rows = sql.includes('*') ? 'own' : rowMaker(columnNames(statement.raw(true)));
    if (this.#cache.size >= MAX_CACHED_STATEMENTS) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    const prepared = { statement, rows };
    this.#cache.set(sql, prepared);
    return prepared;
  }
}

/**
 * What makes a row of these columns an object, as better-sqlite3 makes it: a key per name in column order, a
 * later column of the same name taking the key's value. Compiled once per statement to one object literal, so
 * every row has the same shape; the names are JSON-quoted, so any name is only a key. A column named
 * `__proto__`, which a literal would take as the prototype, gets an own key by the plain loop (better-sqlite3
 * on Node 20 sets the prototype instead), as does every row where code cannot be made from text
 * (`--disallow-code-generation-from-strings`).
 */
export function rowMaker(names: readonly string[]): (values: unknown[]) => Record<string, unknown> {
  const byLoop = (values: unknown[]) => {
    const row: Record<string, unknown> = {};
    for (const [i, name] of names.entries()) {
      Object.defineProperty(row, name, { value: values[i], writable: true, enumerable: true, configurable: true });
    }
    return row;
  };
  if (names.includes('__proto__')) return byLoop;
  const fields = names.map((name, i) => `${JSON.stringify(name)}: values[${i}]`).join(', ');
  try {
    return new Function('values', `return { ${fields} };`) as (values: unknown[]) => Record<string, unknown>;
  } catch {
    return byLoop;
  }
}

function columnNames(statement: BetterSqlite3.Statement): string[] {
  return statement.columns().map((column) => column.name);
}
