// The checkpointer's thread (`checkpointer.ts`): a connection of its own that copies committed pages from
// the WAL into the database file when asked (PASSIVE: it never waits for, nor blocks, the writer or a
// reader). Its connection keeps SQLite's default synchronous=FULL, so a checkpoint flushes the WAL before
// copying and the database file after.
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import type { CheckpointerData, CheckpointerMessage } from './checkpointer.js';

const { file, betterSqlite3 } = workerData as CheckpointerData;
// The very module the main thread loaded (`databaseModulePath`), not this thread's own choice of one.
const Database = createRequire(import.meta.url)(betterSqlite3) as typeof BetterSqlite3;
const port = parentPort!;
let db: BetterSqlite3.Database | undefined;

port.on('message', (message: CheckpointerMessage) => {
  if (message === 'close') {
    db?.close();
    port.close();
    return;
  }
  try {
    db ??= new Database(file, { fileMustExist: true });
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    port.postMessage({ error: String(error) });
  }
});
