import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { startCore } from '../src/app/compose.js';
import { type ChildProcess, spawn } from 'node:child_process';
import { freshPostgresSchema } from '../test/core/dialects.js';
import { postgresReachable, postgresUrl } from './postgres.js';
import { ENTRY, freePort } from '../test/helpers/processes.js';

// Durable top-ups over HTTP with the API scaled out: 1, 2 and 4 `npm run api` processes on one Postgres,
// beside one process on SQLite (WAL, each commit flushed), in the same run. 50 connections in all, split
// evenly over the processes (a load balancer's round robin); each process tops up cards of its own, so
// no request meets another's cooldown. Postgres is `BENCH_DATABASE_URL`, else `TEST_DATABASE_URL`, else
// the local server; without one, only the SQLite figure is printed.
//
// Each Postgres count is measured on the API and, in turn, on a bare `node:http` route running the same
// top-up statement (`bench/scale-bare.ts`): its × N / × 1 is what N processes cost on this host whatever
// serves them, so the API's own × N / × 1 reads against it (`SCALE_PROCESSES=1,4` measures some counts).
//
// What to expect: on SQLite one process is the ceiling (one writer, one flush per commit). On Postgres,
// processes add CPU for HTTP, JSON and the core, and Postgres shares flushes between concurrent commits
// (its own group commit), so throughput grows with processes until Postgres or the machine's cores
// (two here, shared with the load generator) are the limit.

const CONNECTIONS = 50;
const SLICE_SECONDS = 5;
/** Enough that no card comes round within its 1 s cooldown, even at 10,000 top-ups a second. */
const CARDS = 12_000;
const USERS = 100;
/** The Postgres process counts measured: `SCALE_PROCESSES=1,4` for some of them (1 always comes first: the others are read against it). */
const PROCESS_COUNTS = [...new Set([1, ...(process.env.SCALE_PROCESSES ?? '1,2,4').split(',').map(Number)])];

interface Figures {
  /** The warm-up slices run before this one (`warm`). */
  warmUp?: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** CPU milliseconds per top-up: the API processes together, the load generator (this process), Postgres's processes. */
  cpu: { api: number; load: number; postgres: number };
}

/** CPU seconds (user and system) a process has used, from /proc; 0 once it is gone or where there is no /proc. */
function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime and stime, in clock ticks (USER_HZ, 100 on Linux)
  } catch {
    return 0;
  }
}

/** The pids of the local Postgres server's processes (its backends included). */
function postgresPids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres';
        } catch {
          return false;
        }
      });
  } catch {
    return [];
  }
}

/** CPU seconds so far of the API processes, this process and each of Postgres's processes. */
function cpuNow(apiPids: number[]) {
  const own = process.cpuUsage();
  return {
    api: apiPids.reduce((sum, pid) => sum + cpuSecondsOf(pid), 0),
    load: (own.user + own.system) / 1e6,
    postgres: new Map(postgresPids().map((pid) => [pid, cpuSecondsOf(pid)])),
  };
}

/** CPU seconds used between two `cpuNow`: Postgres's processes that ended meanwhile are not counted, new ones whole. */
function cpuBetween(before: ReturnType<typeof cpuNow>, after: ReturnType<typeof cpuNow>) {
  let postgres = 0;
  for (const [pid, seconds] of after.postgres) postgres += seconds - (before.postgres.get(pid) ?? 0);
  return { api: after.api - before.api, load: after.load - before.load, postgres };
}

/**
 * `url` whose sessions also set `settings` ("commit_delay=200 commit_siblings=2"): `BENCH_PG_SETTINGS`, to
 * measure Postgres's own group commit (both are superuser settings, as the local server's user is).
 */
function withPostgresSettings(url: string, settings: string | undefined): string {
  if (!settings) return url;
  const parsed = new URL(url);
  const extra = settings
    .split(/\s+/)
    .filter(Boolean)
    .map((s) => `-c ${s}`);
  parsed.searchParams.set('options', [parsed.searchParams.get('options') ?? '', ...extra].join(' ').trim());
  return parsed.toString();
}

/** A top-up target: a card and its owner's token. */
interface Target {
  token: string;
  cardId: string;
}

/**
 * `USERS` users with a large wallet and `CARDS / USERS` cards each, made through the core itself. Many
 * users, as in life: one user's top-ups all move one wallet, so they queue on its row whatever the
 * number of processes.
 */
async function seed(databaseUrl: string, keyFile: string): Promise<Target[]> {
  const runtime = await startCore({ databaseUrl, cardDataKey: { file: keyFile }, settings: { topupCooldownSeconds: 1 } });
  try {
    runtime.database.sqlite?.pragma('synchronous = OFF');
    const bin = (await runtime.core.listBins()).find((b) => !b.wallet)!;
    const plan = (await runtime.core.listPlans()).at(-1)!;
    const targets: Target[] = [];
    await Promise.all(
      Array.from({ length: USERS }, async (_, u) => {
        const { token } = await runtime.admin.createUser({ name: `Bench ${u}`, deposit: 10_000_000_000 });
        const caller = await runtime.core.authenticate(token);
        for (let i = 0; i < CARDS / USERS; i++) {
          const card = await runtime.core.createCard(caller, { bin_id: bin.id, planId: plan.id, name: `c${i}` });
          targets.push({ token, cardId: card.id });
        }
      }),
    );
    // Interleaved users, so neighbouring requests move different wallets.
    return targets.sort(() => Math.random() - 0.5);
  } finally {
    await runtime.close();
  }
}

/** What serves the top-ups: the API (`npm run api`), or the bare route of `bench/scale-bare.ts` (the baseline). */
type Server = 'api' | 'bare';
const BARE_ENTRY = fileURLToPath(new URL('./scale-bare.ts', import.meta.url));

async function startApis(
  server: Server,
  count: number,
  cwd: string,
  databaseUrl: string,
  keyFile: string,
  poolSize: string | undefined,
): Promise<{ urls: string[]; pids: number[]; stop(): Promise<void> }> {
  const started: ChildProcess[] = [];
  // A bench stopped halfway (Ctrl-C: `bench/run.ts` exits) takes its processes with it.
  const orphaned = () => {
    for (const child of started) child.kill('SIGTERM');
  };
  process.once('exit', orphaned);
  const stop = async () => {
    process.off('exit', orphaned);
    for (const child of started) child.kill('SIGTERM');
    await Promise.all(started.map((child) => (child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve)) : null)));
  };
  const urls: string[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      // Logs go nowhere (as to a file): the child still formats every access line, the parent reads none.
      const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), server === 'api' ? ENTRY.api : BARE_ENTRY], {
        cwd,
        stdio: 'ignore',
        env: {
          PATH: process.env.PATH ?? '',
          DATABASE_URL: databaseUrl,
          CARD_DATA_KEY_FILE: keyFile,
          HTTP_PORT: String(port),
          TOPUP_COOLDOWN_SECONDS: '1',
          API_RATE_LIMIT_PER_TOKEN: '1000000',
          API_RATE_LIMIT_PER_ADDRESS: '1000000',
          LOG_LEVEL: 'info',
          ...(poolSize && { DATABASE_POOL_SIZE: poolSize }),
        },
      });
      started.push(child);
      const url = `http://127.0.0.1:${port}`;
      for (let tries = 0; ; tries++) {
        if (child.exitCode !== null) throw new Error(`the API process exited with ${child.exitCode}`);
        const ok = await fetch(`${url}/livez`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) break;
        if (tries > 300) throw new Error('the API process did not answer /livez within 30 s');
        await sleep(100);
      }
      urls.push(url);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { urls, pids: started.map((child) => child.pid!), stop };
}

/** Top-ups from `CONNECTIONS` connections split over `urls`, each process on its own slice of the cards. */
async function topups(urls: string[], pids: number[], targets: Target[]): Promise<Figures> {
  await sleep(1100); // the cards of the previous slice come off their cooldown
  const cpuBefore = cpuNow(pids);
  const share = Math.floor(targets.length / urls.length);
  const runs = urls.map((url, i) => {
    const mine = targets.slice(i * share, (i + 1) * share);
    let next = Math.floor(Math.random() * mine.length);
    return autocannon({
      url,
      connections: Math.round(CONNECTIONS / urls.length),
      duration: SLICE_SECONDS,
      method: 'POST',
      body: '{"amount":5}',
      requests: [
        {
          setupRequest: (req) => {
            const target = mine[next++ % mine.length]!;
            const headers = { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' };
            return { ...req, headers, path: `/api/v1/cards/${target.cardId}/topup` };
          },
        },
      ],
    });
  });
  const results = await Promise.all(runs);
  const used = cpuBetween(cpuBefore, cpuNow(pids));
  const done = results.reduce((sum, r) => sum + r['2xx'], 0);
  const perTopup = (side: keyof Figures['cpu']) => (used[side] * 1000) / Math.max(1, done);
  return {
    cpu: { api: perTopup('api'), load: perTopup('load'), postgres: perTopup('postgres') },
    // Answers that did the work only: a refusal (a card on its cooldown) is cheaper than a top-up.
    rps: results.reduce((sum, r) => sum + r['2xx'] / r.duration, 0),
    p50: Math.max(...results.map((r) => r.latency.p50)),
    p99: Math.max(...results.map((r) => r.latency.p99)),
    non2xx: results.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
  };
}

const row = (side: string, f: Figures, base?: Figures) =>
  `  ${side.padEnd(22)} ${f.rps.toFixed(0).padStart(6)} req/s   p50 ${f.p50.toFixed(1).padStart(5)} ms   p99 ${f.p99
    .toFixed(1)
    .padStart(
      6,
    )} ms   non-2xx ${f.non2xx}   CPU ms per top-up: API ${f.cpu.api.toFixed(2)}, load ${f.cpu.load.toFixed(2)}, Postgres ${f.cpu.postgres.toFixed(2)}   warm after ${f.warmUp} slices${
    base ? `   ${(f.rps / base.rps).toFixed(2)}× SQLite` : ''
  }`;

/** Warm-up slices: at least, at most, and the fall in API CPU per top-up from one to the next that still counts as warming. */
const WARM_UP = { min: 5, max: 12, falling: 0.1 };

/**
 * Top-ups until the processes are warm: at least `WARM_UP.min` slices, then until a slice's API CPU per
 * top-up is no longer 10 % below the previous one's. One slice did not do: V8 optimizes a process's hot
 * code on background threads, and with the two cores busy, four processes spent 2.2 ms of API CPU per
 * top-up in their first two slices, 1.9 in the third, 1.3 in the fourth and 1.05 in the fifth (0.55-0.65
 * for one warm process). Measured after one, more processes looked slower than they run for days.
 * Returns the slices it took.
 */
async function warm(urls: string[], pids: number[], targets: Target[]): Promise<number> {
  let previous = Number.POSITIVE_INFINITY;
  for (let slice = 1; ; slice++) {
    const { cpu } = await topups(urls, pids, targets);
    if (slice >= WARM_UP.max || (slice >= WARM_UP.min && cpu.api > previous * (1 - WARM_UP.falling))) return slice;
    previous = cpu.api;
  }
}

/** A set of processes serving top-ups, kept running for the whole run and measured in turns with the others. */
interface Group {
  label: string;
  server: Server;
  count: number;
  databaseUrl: string;
  keyFile: string;
  targets: Target[];
  apis?: Awaited<ReturnType<typeof startApis>>;
  warmUp?: number;
  slices: Figures[];
}

/** The mean of a group's measured slices. */
function meanOf(group: Group): Figures {
  const { slices } = group;
  const mean = (pick: (f: Figures) => number) => slices.reduce((sum, f) => sum + pick(f), 0) / slices.length;
  return {
    warmUp: group.warmUp,
    rps: mean((f) => f.rps),
    p50: mean((f) => f.p50),
    p99: mean((f) => f.p99),
    non2xx: slices.reduce((sum, f) => sum + f.non2xx, 0),
    cpu: { api: mean((f) => f.cpu.api), load: mean((f) => f.cpu.load), postgres: mean((f) => f.cpu.postgres) },
  };
}

/** `url` whose connections are named `name` (`application_name`): processes share connections with their own group only. */
function namedUrl(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('application_name', name);
  return parsed.toString();
}

export default async function (): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'scale-bench-'));
  const keyFile = path.join(dir, 'card-data.key');
  let schema: { url: string; drop(): Promise<void> } | undefined;
  try {
    const sqliteUrl = path.join(dir, 'bench.db');
    const sqliteSeed = await seed(sqliteUrl, keyFile);
    const groups: Group[] = [
      { label: 'SQLite, 1 process', server: 'api', count: 1, databaseUrl: sqliteUrl, keyFile, targets: sqliteSeed, slices: [] },
    ];
    try {
      if (await postgresReachable(postgresUrl)) {
        schema = await freshPostgresSchema(postgresUrl);
        const pgUrl = withPostgresSettings(schema.url, process.env.BENCH_PG_SETTINGS);
        if (process.env.BENCH_PG_SETTINGS) console.log(`  Postgres sessions with: ${process.env.BENCH_PG_SETTINGS}`);
        // The Postgres database gets its own key fingerprint: a key file of its own.
        const pgKeyFile = path.join(dir, 'pg-card-data.key');
        const pgSeed = await seed(pgUrl, pgKeyFile);
        for (const count of PROCESS_COUNTS) {
          for (const server of ['api', 'bare'] as const) {
            const label = `${server === 'api' ? 'Postgres' : '  bare route'}, ${count} process${count > 1 ? 'es' : ''}`;
            const databaseUrl = namedUrl(pgUrl, `bench-${server}-${count}`);
            groups.push({ label, server, count, databaseUrl, keyFile: pgKeyFile, targets: pgSeed, slices: [] });
          }
        }
      } else {
        console.log('  Postgres not reachable (set BENCH_DATABASE_URL): the Postgres figures are skipped');
      }
      // Every group runs from start to end, and they take turns, a slice each, so the host's drift (2x over
      // a run here) falls on all of them alike: warm each, then `SCALE_ROUNDS` turns (3 by default).
      for (const group of groups) {
        group.apis = await startApis(group.server, group.count, dir, group.databaseUrl, group.keyFile, process.env.DATABASE_POOL_SIZE);
      }
      for (const group of groups) group.warmUp = await warm(group.apis!.urls, group.apis!.pids, group.targets);
      const rounds = Number(process.env.SCALE_ROUNDS ?? 3);
      for (let round = 0; round < rounds; round++) {
        for (const group of groups) group.slices.push(await topups(group.apis!.urls, group.apis!.pids, group.targets));
      }
    } finally {
      await Promise.all(groups.map((group) => group.apis?.stop()));
    }

    console.log(
      `top-ups over HTTP (${CONNECTIONS} connections split over the processes, durable commits, access log on; the mean of ${groups[0]!.slices.length} slices in turns)`,
    );
    const [sqliteGroup, ...postgresGroups] = groups;
    const sqlite = meanOf(sqliteGroup!);
    console.log(row(sqliteGroup!.label, sqlite));
    const one: Partial<Record<Server, Figures>> = {};
    for (const group of postgresGroups) {
      const figures = meanOf(group);
      one[group.server] ??= figures;
      console.log(`${row(group.label, figures, sqlite)}   ${(figures.rps / one[group.server]!.rps).toFixed(2)}× one process`);
      if (group.server === 'bare') {
        const api = meanOf(postgresGroups.find((g) => g.server === 'api' && g.count === group.count)!);
        if (group.count === 1) console.log(`    API / bare route, 1 process: ${((api.rps / figures.rps) * 100).toFixed(0)} %`);
        else {
          const apiScale = api.rps / one.api!.rps;
          const bareScale = figures.rps / one.bare!.rps;
          console.log(
            `    × ${group.count} / × 1: API ${apiScale.toFixed(2)}, bare route ${bareScale.toFixed(2)}: the API keeps ${((apiScale / bareScale) * 100).toFixed(0)} % of what the host gives`,
          );
        }
      }
    }
  } finally {
    await schema?.drop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
