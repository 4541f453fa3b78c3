import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * The drivers of this process that write each file, and which of them holds its write lock (a batch or a
 * raw transaction open). Two connections of one process writing one file (two cores in one test, the
 * admin command line run in-process) must not meet in SQLite's busy handler: it sleeps synchronously, so
 * the holder's batch, waiting for the event loop to commit, would never get to, and the other would
 * time out. So within a process the second waits its turn here, without blocking.
 */
const locks = new Map<string, { holder: FileLock; waiting: Set<() => void> }>();

/** One writer's share of its file's in-process write lock; for an in-memory database it never waits. */
export class FileLock {
  /** The file; none for an in-memory database. */
  readonly #file: string | undefined;

  /** `wake`: called (in a microtask) when another writer lets go of the file after `free` said no. */
  constructor(
    database: BetterSqlite3.Database,
    private readonly wake: () => void,
  ) {
    this.#file = database.memory ? undefined : path.resolve(database.name);
  }

  /** Whether no other writer of this process holds the file; if one does, `wake` is called when it lets go. */
  free(): boolean {
    const lock = this.#file === undefined ? undefined : locks.get(this.#file);
    if (!lock || lock.holder === this) return true;
    lock.waiting.add(this.wake);
    return false;
  }

  take(): void {
    if (this.#file === undefined) return;
    const lock = locks.get(this.#file);
    if (!lock) locks.set(this.#file, { holder: this, waiting: new Set() });
    else lock.holder = this;
  }

  /** Lets go of the file (the caller has nothing open on it any more), waking the writers that waited. */
  release(): void {
    const lock = this.#file === undefined ? undefined : locks.get(this.#file);
    if (!lock || lock.holder !== this) return;
    locks.delete(this.#file!);
    for (const wake of lock.waiting) queueMicrotask(wake);
  }
}
