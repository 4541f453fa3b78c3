import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';

/** How often, at most, the checkpointer is asked to copy the WAL into the database file. */
const CHECKPOINT_EVERY_MS = 100;
/**
 * The writer's own checkpoint, on the main thread, only if the checkpointer falls far behind (pages
 * of WAL: about 40 MB), so the WAL cannot grow without bound.
 */
const WRITER_CHECKPOINT_PAGES = 10_000;

// The checkpointer: a worker thread with a connection of its own that copies committed pages from
// the WAL into the database file when asked (PASSIVE: it never waits for, nor blocks, the writer or a
// reader). Its connection keeps SQLite's default synchronous=FULL, so a checkpoint flushes the WAL
// before copying and the database file after. Plain JavaScript in a string: it runs as it is, from
// the sources under tsx and from dist/ alike.
const CHECKPOINTER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.betterSqlite3);
let db;
parentPort.on('message', (message) => {
  if (message === 'close') {
    db?.close();
    parentPort.close();
    return;
  }
  try {
    db ??= new Database(workerData.file, { fileMustExist: true });
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    parentPort.postMessage({ error: String(error) });
  }
});
`;

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
  // Started at the first checkpoint: a handle that writes little (a command, a test) never needs one.
  let checkpointer: { worker: Worker; exited: Promise<void> } | undefined;
  function checkpoint(): void {
    if (!checkpointer) {
      const worker = new Worker(CHECKPOINTER, {
        eval: true,
        workerData: { file, betterSqlite3: fileURLToPath(import.meta.resolve('better-sqlite3')) },
      });
      worker.unref();
      // Never fatal, to the process or the writes: the writer checkpoints itself past WRITER_CHECKPOINT_PAGES.
      // Said once: a checkpoint that fails keeps failing, every 100 ms.
      let warned = false;
      const warn = (text: string) => {
        if (!warned) process.emitWarning(`${text}; the writer checkpoints itself past ${WRITER_CHECKPOINT_PAGES} pages of WAL`);
        warned = true;
      };
      worker.on('message', (message: { error: string }) => warn(`WAL checkpoint failed: ${message.error}`));
      worker.on('error', (error) => warn(`WAL checkpointer stopped: ${String(error)}`));
      checkpointer = { worker, exited: new Promise<void>((resolve) => worker.once('exit', () => resolve())) };
    }
    checkpointer.worker.postMessage('checkpoint');
  }
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
            checkpoint();
          }
          resolve();
        });
      }),
    async close() {
      if (checkpointer) {
        // Kept alive until it has closed its connection.
        checkpointer.worker.ref();
        checkpointer.worker.postMessage('close');
        await checkpointer.exited;
      }
      if (fd !== undefined) fs.closeSync(fd);
      fd = undefined;
    },
  };
}
