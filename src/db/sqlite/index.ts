// Our SQLite dialect for Kysely, over better-sqlite3, one idea per file: the dialect (`dialect.ts`), its
// driver (`driver.ts`), the group commit (`group-commit.ts`), the flush after the fact (`flusher.ts`), the
// prepared statements (`statement-cache.ts`), the in-process write lock (`file-lock.ts`); and what keeps
// the file's WAL (`wal.ts`): the flush, and checkpoints in a worker thread (`checkpointer.ts`,
// `checkpointer-worker.ts`).
export { sqliteDialect, type SqliteDialect, type SqliteDialectOptions } from './dialect.js';
export type { GroupCommitOptions, GroupCommitStats } from './group-commit.js';
export { keepWal, type WalKeeper } from './wal.js';
