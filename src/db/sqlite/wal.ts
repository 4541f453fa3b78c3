import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { Checkpointer } from './checkpointer.js';

/** How often, at most, the checkpointer is asked to copy the WAL into the database file. */
const CHECKPOINT_EVERY_MS = 100;
/**
 * The writer's own checkpoint, on the main thread, only if the checkpointer falls far behind (pages
 * of WAL: about 40 MB), so the WAL cannot grow without bound.
 */
const WRITER_CHECKPOINT_PAGES = 10_000;

export interface WalKeeper {
  /** Makes every commit written so far durable: `fdatasync` of the WAL, on libuv's thread pool. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/**
 * What a SQLite file's writer needs when it commits without flushing (`sqliteDialect`'s `flush`): the
 * flush itself, off the main thread, and checkpoints in a worker thread, so the main thread waits
 * neither for the disk nor for copying the WAL (measured: checkpoints on the writer took a third of
 * the API's top-up throughput, `bench/api.bench.ts`). The first flush also flushes the folder, which
 * holds the WAL file's name (the WAL is created once and kept while the writer is open).
 */
export function keepWal(file: string, writer: BetterSqlite3.Database): WalKeeper {
  writer.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
  const checkpointer = new Checkpointer(file, (text) =>
    process.emitWarning(`${text}; the writer checkpoints itself past ${WRITER_CHECKPOINT_PAGES} pages of WAL`),
  );
  let lastCheckpoint = performance.now();
  let fd: number | undefined;

  /** The WAL's descriptor, or undefined while there is no WAL file (nothing has been written to flush). */
  function open(): number | undefined {
    if (fd === undefined) {
      try {
        fd = fs.openSync(`${file}-wal`, 'r');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
      const folder = fs.openSync(path.dirname(path.resolve(file)), 'r');
      try {
        fs.fsyncSync(folder);
      } finally {
        fs.closeSync(folder);
      }
    }
    return fd;
  }

  return {
    flush: () =>
      new Promise<void>((resolve, reject) => {
        let wal: number | undefined;
        try {
          wal = open();
        } catch (error) {
          reject(error);
          return;
        }
        if (wal === undefined) {
          resolve();
          return;
        }
        fs.fdatasync(wal, (error) => {
          if (error) {
            reject(error);
            return;
          }
          const now = performance.now();
          if (now - lastCheckpoint >= CHECKPOINT_EVERY_MS) {
            lastCheckpoint = now;
            checkpointer.request();
          }
          resolve();
        });
      }),
    async close() {
      await checkpointer.close();
      if (fd !== undefined) fs.closeSync(fd);
      fd = undefined;
    },
  };
}
