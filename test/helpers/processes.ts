import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DIST, ROOT, staleness } from '../../scripts/build.mjs';

/** The project's entry points, run as an operator runs them: each in its own process. */
export const ENTRY = {
  main: fileURLToPath(new URL('../../src/main.ts', import.meta.url)),
  api: fileURLToPath(new URL('../../src/api-main.ts', import.meta.url)),
  admin: fileURLToPath(new URL('../../src/admin/cli.ts', import.meta.url)),
};
const TSX = import.meta.resolve('tsx');
const SRC_DIR = path.join(ROOT, 'src') + path.sep;
/** Whether dist/ is the build of the sources as they are (`npm test` builds it before the test files run). */
const BUILT = staleness() === null;

/**
 * How node runs `script`: an entry point of src/ as its build in dist/ when that is up to date, as `npm start`
 * runs it: a process then starts without tsx's loader, which took 3.5-4 s of CPU to load the app on a 2-core
 * host; otherwise (and for the tests' own scripts) the source through tsx.
 */
export function nodeArgs(script: string): string[] {
  if (BUILT && script.startsWith(SRC_DIR) && script.endsWith('.ts')) {
    return [path.join(DIST, path.relative(ROOT, script)).replace(/\.ts$/, '.js')];
  }
  return ['--import', TSX, script];
}

export interface StartedProcess {
  child: ChildProcess;
  /** Log lines parsed as JSON (a line that is not JSON is kept as `{ msg: line }`). */
  logs: Record<string, any>[];
  /** Everything the process printed, standard output and error. */
  output: () => string;
  /** What it printed on standard output alone. */
  stdout: () => string;
  /** The first log line with this message, or matching this test, once written (logs are gathered up to 200 ms). */
  waitForLog(match: string | ((line: Record<string, any>) => boolean)): Promise<Record<string, any>>;
  exited: Promise<number | null>;
}

/**
 * Runs `script` (src/main.ts by default) in `cwd` (a temporary folder, so no developer's `.env` is read)
 * with only PATH and `env` set.
 */
export function startProcess(cwd: string, env: Record<string, string>, script = ENTRY.main, args: string[] = []): StartedProcess {
  const child = spawn(process.execPath, [...nodeArgs(script), ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Logs are JSON lines on standard error (standard output is for answers, like the admin CLI's --json).
  let text = '';
  let out = '';
  const logs: Record<string, any>[] = [];
  const waiters = new Set<() => void>();
  const take = (chunk: Buffer) => {
    text += chunk.toString('utf8');
    const lines = text.split('\n');
    for (const line of lines.slice(logs.length, -1)) {
      try {
        logs.push(JSON.parse(line));
      } catch {
        logs.push({ msg: line });
      }
    }
    for (const wake of [...waiters]) wake();
  };
  child.stderr!.on('data', take);
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    logs,
    exited,
    output: () => out + text,
    stdout: () => out,
    waitForLog(match) {
      const matches = typeof match === 'string' ? (l: Record<string, any>) => l.msg === match : match;
      const msg = typeof match === 'string' ? match : 'matching';
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = logs.find(matches);
          if (found) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(found);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`No log line "${msg}" within 20 s; output:\n${out}${text}`));
        }, 20_000);
        waiters.add(check);
        void exited.then(() => setTimeout(check, 50));
        check();
      });
    },
  };
}

/** `npm run admin -- <args> --json` in its own process: the exit code and the one JSON object it printed. */
export async function runAdminCli(
  cwd: string,
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number | null; json: Record<string, any>; output: string; stdout: string }> {
  const started = startProcess(cwd, { LOG_LEVEL: 'warn', ...env }, ENTRY.admin, [...args, '--json']);
  const code = await started.exited;
  const lines = started.output().trim().split('\n');
  let json: Record<string, any> = {};
  try {
    json = JSON.parse(lines.find((l) => l.startsWith('{"ok"')) ?? '{}');
  } catch {
    // left empty: the caller asserts on `output`
  }
  return { code, json, output: started.output(), stdout: started.stdout() };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A test's own script run in another process, held at a start line: it prints `ready` once it has opened what it
 * needs, waits for `go` on its standard input, and prints its result as JSON on its last line. `ready` settles
 * when it is ready (or ended); `done` with its result, or rejects naming `what` when it exits otherwise.
 */
export function startAtSignal<T>(what: string, script: string, args: string[]): { ready: Promise<void>; go(): void; done: Promise<T> } {
  const child = spawn(process.execPath, [...nodeArgs(script), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let signalReady: () => void;
  const ready = new Promise<void>((resolve) => (signalReady = resolve));
  const done = new Promise<T>((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.startsWith('ready\n')) signalReady();
    });
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      signalReady();
      if (code !== 0) reject(new Error(`${what} exited with ${code}: ${err}`));
      else resolve(JSON.parse(out.trim().split('\n').at(-1)!) as T);
    });
  });
  return { ready, done, go: () => child.stdin.end('go\n') };
}
