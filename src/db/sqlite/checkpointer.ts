import { Worker } from 'node:worker_threads';
import { databaseModulePath } from '../better-sqlite3.js';

/** What the worker is started with. */
export interface CheckpointerData {
  file: string;
  /** Where the main thread's better-sqlite3 is, for the worker to load the same one. */
  betterSqlite3: string;
}

export type CheckpointerMessage = 'checkpoint' | 'close';

const WORKER = new URL('./checkpointer-worker.js', import.meta.url);

/**
 * Whether this thread's module hooks also load a worker's files: from Node 22.2 every thread shares one
 * hooks thread (nodejs/node#52706), so a worker started under tsx reads `checkpointer-worker.ts` (for
 * `.js`) as the main thread does. Before, a worker's entry is loaded without them, `--import tsx` or not
 * (tsx issue #354: "Unknown file extension .ts").
 */
function hooksReachWorkers(): boolean {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 2);
}

/**
 * Starts the worker from its file: compiled (dist/), `checkpointer-worker.js` as it is; from the sources
 * under tsx on a Node whose hooks do not reach workers, through one line that registers tsx in the worker
 * first, then imports the same file. Registering it there on a later Node would add one more tsx to the
 * hooks every thread shares, for each worker started.
 */
function startWorker(workerData: CheckpointerData): Worker {
  if (!import.meta.url.endsWith('.ts') || hooksReachWorkers()) return new Worker(WORKER, { workerData });
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(WORKER.href)}); });`;
  return new Worker(bootstrap, { eval: true, workerData });
}

/**
 * Checkpoints in a worker thread with a connection of its own (`checkpointer-worker.ts`), so the main
 * thread never waits for copying the WAL into the database file. Started at the first request: a handle
 * that writes little (a command, a test) never needs one. Never fatal, to the process or the writes: a
 * failure is said once (`onFailure`), and the writer checkpoints itself when the WAL grows too long.
 */
export class Checkpointer {
  #running: { worker: Worker; exited: Promise<void> } | undefined;

  constructor(
    private readonly file: string,
    private readonly onFailure: (text: string) => void,
  ) {}

  /** Asks for a checkpoint; the worker copies what has been committed, in its own time. */
  request(): void {
    this.#running ??= this.#start();
    this.#running.worker.postMessage('checkpoint' satisfies CheckpointerMessage);
  }

  /** Waits for the worker to close its connection and end. */
  async close(): Promise<void> {
    if (!this.#running) return;
    // Kept alive until it has closed its connection.
    this.#running.worker.ref();
    this.#running.worker.postMessage('close' satisfies CheckpointerMessage);
    await this.#running.exited;
  }

  #start(): { worker: Worker; exited: Promise<void> } {
    const worker = startWorker({ file: this.file, betterSqlite3: databaseModulePath });
    worker.unref();
    // Said once: a checkpoint that fails keeps failing, every time it is asked for.
    let said = false;
    const fail = (text: string) => {
      if (!said) this.onFailure(text);
      said = true;
    };
    worker.on('message', (message: { error: string }) => fail(`WAL checkpoint failed: ${message.error}`));
    worker.on('error', (error) => fail(`WAL checkpointer stopped: ${String(error)}`));
    return { worker, exited: new Promise<void>((resolve) => worker.once('exit', () => resolve())) };
  }
}
