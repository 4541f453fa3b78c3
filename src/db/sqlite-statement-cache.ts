import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

const MAX_CACHED_STATEMENTS = 500;

/**
 * Wraps better-sqlite3 for Kysely's SqliteDialect:
 * - keeps prepared statements, since the dialect otherwise prepares every query anew;
 * - turns the dialect's deferred `begin` into `begin immediate`, so a write transaction takes the
 *   write lock up front and waits out `busy_timeout` instead of failing with SQLITE_BUSY mid-way
 *   when another process writes the same file.
 */
export function withStatementCache(raw: BetterSqlite3.Database): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => raw.close(),
    prepare(sqlText: string): SqliteStatement {
      const cached = cache.get(sqlText);
      if (cached) return cached;
      const statement = raw.prepare(sqlText === 'begin' ? 'begin immediate' : sqlText);
      if (cache.size >= MAX_CACHED_STATEMENTS) {
        const oldest = cache.keys().next().value;
        if (oldest !== undefined) cache.delete(oldest);
      }
      cache.set(sqlText, statement);
      return statement;
    },
  };
}
