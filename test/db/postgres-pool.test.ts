import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, type TestContext, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../../src/db/database.js';
import { APPLICATION_NAME, SharedPool, shareOf } from '../../src/db/shared-pool.js';
import { freshPostgresDatabase, freshPostgresSchema, withSearchPath, withoutPostgres } from '../core/dialects.js';
import { eventually } from '../helpers/wait.js';
import { metricsRegistry, poolMetrics } from '../../src/infra/metrics.js';

const run = promisify(execFile);

test('a Postgres database opens as many connections as its pool size, and no more', { skip: withoutPostgres }, async () => {
  const schema = await freshPostgresSchema(process.env.TEST_DATABASE_URL!);
  const database = openDatabase(schema.url, { poolSize: 3 });
  try {
    // Six sessions at once, each holding its connection a moment: three at a time, on three backends.
    const pids = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.2)`.execute(database.db);
        return rows[0]!.pid;
      }),
    );
    assert.equal(new Set(pids).size, 3);
  } finally {
    await database.close();
    await schema.drop();
  }
});

describe('processes on one Postgres database share its pool size', { skip: withoutPostgres }, () => {
  const baseUrl = process.env.TEST_DATABASE_URL!;

  async function onFreshDatabase(t: TestContext) {
    const database = await freshPostgresDatabase(baseUrl);
    t.after(() => database.drop());
    const open = (total: number, url = database.url) => {
      const pool = new SharedPool({ url, total, Client: pg.Client });
      t.after(() => pool.end());
      return pool;
    };
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    t.after(() => admin.end());
    return { database, open, admin };
  }

  test('each process counts the others at work on the database and uses its share: the total over them, rounded up, at least two', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 6, 20].map((processes) => shareOf(10, processes)),
      [10, 5, 4, 3, 2, 2],
    );
    assert.equal(shareOf(1, 3), 1, 'never more than the total');
  });

  test('three processes take 4 of 10 connections each; when one stops, the two left take 5', async (t) => {
    const { open } = await onFreshDatabase(t);
    const a = open(10);
    await a.count();
    assert.deepEqual(a.sharing, { processes: 1, share: 10 });
    const b = open(10);
    const c = open(10);
    const all = [a, b, c];
    await eventually('each of the three processes counts three', async () => {
      await Promise.all(all.map((pool) => pool.count()));
      return all.every((pool) => pool.sharing.processes === 3);
    });
    for (const pool of all) assert.deepEqual(pool.sharing, { processes: 3, share: 4 });
    await c.end();
    await eventually('the two left count two', async () => {
      await Promise.all([a.count(), b.count()]);
      return a.sharing.processes === 2 && b.sharing.processes === 2;
    });
    assert.deepEqual(a.sharing, { processes: 2, share: 5 });
  });

  test('a process never has more statements running than its share: the others wait for a connection', async (t) => {
    const { open, admin } = await onFreshDatabase(t);
    const a = open(4);
    const b = open(4);
    await eventually('both processes count two', async () => {
      await Promise.all([a.count(), b.count()]);
      return a.sharing.share === 2 && b.sharing.share === 2;
    });
    // Five statements of `a` that wait for a lock the test holds: two reach Postgres, three wait in `a`.
    await admin.query('select pg_advisory_lock(4242)');
    const statements = Array.from({ length: 5 }, async () => {
      const client = await a.connect();
      try {
        await client.query('select pg_advisory_xact_lock_shared(4242)', []);
      } finally {
        client.release();
      }
    });
    const waitingInPostgres = async () => {
      const { rows } = await admin.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity where application_name = $1 and wait_event_type = 'Lock'`,
        [a.applicationName],
      );
      return rows[0]!.n;
    };
    await eventually('two of the statements wait on the lock in Postgres', async () => (await waitingInPostgres()) === 2);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(await waitingInPostgres(), 2, 'no third statement reached Postgres');
    await admin.query('select pg_advisory_unlock(4242)');
    await Promise.all(statements);
  });

  test('processes in other schemas of the database are not counted', async (t) => {
    const { database, open } = await onFreshDatabase(t);
    const plain = open(10);
    const other = open(10, withSearchPath(database.url, 'elsewhere'));
    await Promise.all([plain.count(), other.count()]);
    await Promise.all([plain.count(), other.count()]);
    assert.deepEqual(plain.sharing, { processes: 1, share: 10 });
    assert.deepEqual(other.sharing, { processes: 1, share: 10 });
  });

  test("a URL's own application_name stays the connections' name, and the processes using it still share", async (t) => {
    const { database, open } = await onFreshDatabase(t);
    const url = new URL(database.url);
    // LIKE's wildcards and a letter Postgres would not keep as it is.
    url.searchParams.set('application_name', 'cards_api 100% café');
    const pools = [open(10, url.toString()), open(10, url.toString())];
    const other = open(10, database.url);
    await eventually('the two count each other, and not the third', async () => {
      await Promise.all([...pools, other].map((pool) => pool.count()));
      return pools.every((pool) => pool.sharing.processes === 2);
    });
    assert.deepEqual(other.sharing, { processes: 1, share: 10 });
    for (const pool of pools) assert.match(pool.applicationName, /^cards_api 100% caf\? [0-9a-f]{8} [0-9a-f]{8}$/);
  });

  test('a pool left open does not keep its process alive once idle, although it counts every 2 s', async (t) => {
    const { database } = await onFreshDatabase(t);
    const script = `
      import pg from 'pg';
      import { SharedPool } from ${JSON.stringify(new URL('../../src/db/shared-pool.ts', import.meta.url).href)};
      const pool = new SharedPool({ url: process.env.URL, total: 4, Client: pg.Client });
      await pool.count();
      const client = await pool.connect();
      await client.query('select 1', []);
      client.release();
      console.log('idle');
    `;
    const started = Date.now();
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      env: { ...process.env, URL: database.url },
      timeout: 30_000,
    });
    assert.equal(stdout.trim(), 'idle');
    // pg closes idle connections after 10 s: the process ended before, without them keeping it.
    assert.ok(Date.now() - started < 10_000, `the process ended after ${Date.now() - started} ms`);
  });

  test('an opened database names its connections for the count, and /metrics shows its share', async (t) => {
    const { database } = await onFreshDatabase(t);
    const opened = openDatabase(database.url, { poolSize: 4 });
    t.after(() => opened.close());
    const registry = metricsRegistry();
    poolMetrics(registry, opened.sharing!);
    const second = openDatabase(database.url, { poolSize: 4 });
    t.after(() => second.close());
    await eventually(
      'the metrics show two processes sharing 4 connections, 2 each',
      async () => {
        const text = await registry.metrics();
        return text.includes('\ndb_pool_processes 2\n') && text.includes('\ndb_pool_share 2\n');
      },
      { timeoutMs: 15_000 },
    );
    const { rows } = await sql<{
      name: string;
    }>`select application_name as name from pg_stat_activity where pid = pg_backend_pid()`.execute(opened.db);
    assert.match(rows[0]!.name, new RegExp(`^${APPLICATION_NAME} [0-9a-f]{8} [0-9a-f]{8}$`));
  });
});
