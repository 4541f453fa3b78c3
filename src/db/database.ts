import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { Database as BetterSqlite3Database } from './better-sqlite3.js';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { DEFAULT_POSTGRES_POOL_SIZE } from './pool-size.js';
import { PreparingClient } from './prepared-statements.js';
import { SharedPool } from './shared-pool.js';
import type { Database } from './schema.js';
import { readsDirectly } from './compiled-query.js';
import { keepWal, sqliteDialect, type GroupCommitOptions, type GroupCommitStats } from './sqlite/index.js';
import { createPrivateFolder, reservePrivateFile, restrictToOwner } from '../infra/private-files.js';

export type DatabaseTarget = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

export interface OpenDatabase {
  db: Kysely<Database>;
  target: DatabaseTarget;
  /** The raw SQLite handle (for online backups); absent on Postgres. */
  sqlite?: BetterSqlite3.Database;
  /** What the SQLite group commit has done (see `sqliteDialect`); absent on Postgres, where each operation commits alone. */
  groupCommit?: GroupCommitStats;
  /**
   * Settles with the error if a flush of a SQLite file's WAL fails: nothing more can be made durable, and
   * the process should stop (the service exits to be restarted, as Postgres does after a failed fsync).
   * Never settles otherwise; absent on Postgres and in memory.
   */
  durabilityLost?: Promise<unknown>;
  /** Postgres: the processes sharing the connections at the last count, and this one's share (see `SharedPool`). */
  sharing?: () => { processes: number; share: number };
  close(): Promise<void>;
}

/** `postgres://…` goes to Postgres; a path, `file:` URL or `:memory:` to SQLite. */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (/^postgres(ql)?:\/\//.test(url)) return { kind: 'postgres', url };
  if (url.startsWith('file:')) {
    const file = url.slice('file:'.length).replace(/^\/\/(?=\/)/, '');
    return { kind: 'sqlite', file: decodeURIComponent(file.split('?')[0] ?? file) };
  }
  return { kind: 'sqlite', file: url };
}

/**
 * Opens a SQLite file, readable by its owner only: a new file is created with mode 0600 in a folder
 * created 0700, before SQLite makes its -wal and -shm (which take the database file's mode); files
 * left wider by an older version are narrowed.
 */
export function openSqlite(file: string): BetterSqlite3.Database {
  const onDisk = isOnDisk(file);
  if (onDisk) {
    createPrivateFolder(path.dirname(path.resolve(file)));
    reservePrivateFile(file);
    restrictToOwner(file);
  }
  const raw = new BetterSqlite3Database(file);
  raw.pragma('busy_timeout = 10000');
  useWal(raw);
  raw.pragma('synchronous = FULL');
  raw.pragma('foreign_keys = ON');
  // Deleted rows (purged OTP codes) are overwritten, not left in free pages for a copy of the file to find.
  raw.pragma('secure_delete = ON');
  raw.pragma('temp_store = MEMORY');
  raw.pragma('cache_size = -65536');
  if (onDisk) for (const suffix of ['-wal', '-shm']) restrictToOwner(file + suffix);
  return raw;
}

/**
 * Turns a file to WAL. On a new file several processes starting at once each read it, then each needs the
 * write lock to change its journal: SQLite refuses all but one at once with SQLITE_BUSY, without waiting,
 * since waiting could deadlock. The others try again (for up to the busy timeout) once the first is done.
 */
function useWal(raw: BetterSqlite3.Database): void {
  const deadline = Date.now() + 10_000;
  for (let pause = 5; ; pause = Math.min(pause * 2, 200)) {
    try {
      raw.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, pause);
    }
  }
}

/** A second connection to a SQLite file opened by `openSqlite`, for reads only: in WAL mode it reads the last commit while writes go on. */
export function openSqliteReader(file: string): BetterSqlite3.Database {
  const raw = new BetterSqlite3Database(file, { fileMustExist: true });
  raw.pragma('query_only = ON');
  raw.pragma('busy_timeout = 10000');
  return raw;
}

/** Whether a SQLite target is a file (not `:memory:` or a temporary database). */
export function isOnDisk(file: string): boolean {
  return file !== ':memory:' && file !== '';
}

let pgParsersSet = false;
function usePlainNumbersForPostgresBigints(): void {
  if (pgParsersSet) return;
  // Money columns are bigint cents, far below 2^53; counts are bigint too.
  pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
  pgParsersSet = true;
}

/**
 * `groupCommit`: how batches of writes are capped on SQLite (see `sqliteDialect`); `poolSize`: how many
 * connections to Postgres the processes on the database keep open together (each a transaction at a time;
 * this process uses its share, see `SharedPool`).
 */
export function openDatabase(url: string, options: { groupCommit?: GroupCommitOptions; poolSize?: number } = {}): OpenDatabase {
  const target = parseDatabaseUrl(url);
  if (target.kind === 'postgres') {
    usePlainNumbersForPostgresBigints();
    const pool = new SharedPool({ url: target.url, total: options.poolSize ?? DEFAULT_POSTGRES_POOL_SIZE, Client: PreparingClient });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    // Kysely ends the pool only if it ever used it; the pool counts its processes from the start.
    const close = async () => {
      await db.destroy();
      await pool.end();
    };
    return { db, target, sharing: () => pool.sharing, close };
  }
  const sqlite = openSqlite(target.file);
  const onDisk = isOnDisk(target.file);
  const reader = onDisk ? openSqliteReader(target.file) : undefined;
  // The commits' flushes and the checkpoints run off the main thread (see `sqliteDialect`, `keepWal`).
  const wal = onDisk ? keepWal(target.file, sqlite) : undefined;
  const groupCommit: GroupCommitStats = { commits: 0, operations: 0, largest: 0 };
  let flushFailed: (error: unknown) => void = () => undefined;
  const durabilityLost = wal ? new Promise<unknown>((resolve) => (flushFailed = resolve)) : undefined;
  const dialect = sqliteDialect(sqlite, {
    reader,
    stats: groupCommit,
    groupCommit: options.groupCommit,
    flush: wal?.flush,
    onFlushFailed: (error) => flushFailed(error),
  });
  const db = new Kysely<Database>({ dialect });
  readsDirectly(db, dialect.readNow);
  const close = async () => {
    await db.destroy();
    await wal?.close();
  };
  return { db, target, sqlite, groupCommit, durabilityLost, close };
}
