import { createHash, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestContext } from 'node:test';
import pg from 'pg';
import { createTestCore, type TestCore } from '../helpers/core.js';
import type { CoreSettings } from '../../src/core/settings.js';
import { openDatabase } from '../../src/db/database.js';
import { MIGRATIONS_FOLDER, migrateToLatest } from '../../src/db/migrate.js';

export type Dialect = 'sqlite' | 'postgres';

/** SQLite always; Postgres as well when TEST_DATABASE_URL names one. Each suite runs once per dialect. */
/** For `skip`: why the Postgres-only tests cannot run here, or false when they can. */
export const withoutPostgres: string | false = !process.env.TEST_DATABASE_URL && 'TEST_DATABASE_URL is not set';

export function dialects(): Dialect[] {
  return process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
}

export interface CoreOptions {
  settings?: Partial<CoreSettings>;
  asyncIssue?: boolean;
}

/** `url` with its connections' search_path set to `schema`. */
export function withSearchPath(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', `-c search_path=${schema}`);
  return parsed.toString();
}

/**
 * Kysely's migrator introspects the tables of every schema, and Postgres fails that query when
 * another test process drops its schema meanwhile. Migrations hold this advisory lock shared,
 * drops hold it exclusive.
 */
const SCHEMA_LOCK = 20261122;

async function onClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Runs `migrate` while no test schema can be dropped. */
export function whileNoSchemaIsDropped<T>(baseUrl: string, migrate: () => Promise<T>): Promise<T> {
  return onClient(baseUrl, async (client) => {
    await client.query('select pg_advisory_lock_shared($1)', [SCHEMA_LOCK]);
    return migrate();
  });
}

/** A Postgres schema of its own, dropped by the returned function. */
export async function freshPostgresSchema(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `test_${randomUUID().replaceAll('-', '')}`;
  await onClient(baseUrl, (client) => client.query(`create schema ${schema}`));
  return {
    url: withSearchPath(baseUrl, schema),
    drop: () =>
      onClient(baseUrl, async (client) => {
        await client.query('select pg_advisory_lock($1)', [SCHEMA_LOCK]);
        await client.query(`drop schema ${schema} cascade`);
      }),
  };
}

/**
 * Postgres's migrated layout, built once for every test process of a run: a database named by a hash of the
 * migrations, which each in-process core copies (`create database … template`, about 70 ms) instead of
 * migrating a schema of its own (0.7-1.3 s with its drop). The processes the tests start still migrate their
 * own schemas, and test/db/migrate.test.ts migrates from scratch.
 */
const TEMPLATE_LOCK = 20261128;
let template: Promise<string> | undefined;

function migrationsHash(): string {
  const hash = createHash('sha256');
  for (const name of readdirSync(MIGRATIONS_FOLDER).sort()) {
    hash.update(name).update(readFileSync(path.join(MIGRATIONS_FOLDER, name)));
  }
  return hash.digest('hex').slice(0, 16);
}

/** `url` naming the database `name` instead. */
function onDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

function migratedTemplate(baseUrl: string): Promise<string> {
  template ??= onClient(baseUrl, async (client) => {
    const name = `test_template_${migrationsHash()}`;
    // One process builds it; the others wait here, then find it.
    await client.query('select pg_advisory_lock($1)', [TEMPLATE_LOCK]);
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount) return name;
    // A build under way holds the lock, so one found now was left by a builder that died.
    const { rows: left } = await client.query<{ datname: string }>("select datname from pg_database where datname like 'test_building_%'");
    for (const { datname } of left) await dropBuilding(client, datname);
    // Built under another name and renamed once migrated, so a half-built template is never copied.
    const building = `test_building_${randomUUID().replaceAll('-', '')}`;
    await client.query(`create database ${building}`);
    try {
      const database = openDatabase(onDatabase(baseUrl, building), { poolSize: 1 });
      try {
        await migrateToLatest(database.db);
      } finally {
        await database.close();
      }
      // No connections, so neither autovacuum nor a stray client can keep a copy from starting.
      await client.query(`alter database ${building} is_template true allow_connections false`);
      await client.query(`alter database ${building} rename to ${name}`);
    } catch (error) {
      await dropBuilding(client, building);
      throw error;
    }
    return name;
  });
  // A failed build is tried again by the next test rather than failing every one after it.
  template.catch(() => {
    template = undefined;
  });
  return template;
}

async function dropBuilding(client: pg.Client, name: string): Promise<void> {
  await client.query(`alter database ${name} is_template false`);
  await client.query(`drop database if exists ${name} with (force)`);
}

/** A migrated Postgres database of its own, dropped by the returned function. */
export async function freshPostgresDatabase(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const source = await migratedTemplate(baseUrl);
  const name = `test_${randomUUID().replaceAll('-', '')}`;
  await onClient(baseUrl, (client) => client.query(`create database ${name} template ${source}`));
  return {
    url: onDatabase(baseUrl, name),
    drop: () => dropWhenUnused(baseUrl, name),
  };
}

/**
 * Drops a test database once nothing is connected to it. A test's other pools (a second instance, an app closed
 * after the core) may still be closing, and terminating them would fail whichever test runs next. Postgres
 * itself waits up to 5 s for them at each try; after 20 s the database is left behind (a pool left open
 * would keep its connections). The drop goes on in the background, and keeps the test process alive until
 * it is done.
 */
async function dropWhenUnused(baseUrl: string, name: string): Promise<void> {
  const attempt = async (): Promise<void> => {
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        await onClient(baseUrl, (client) => client.query(`drop database if exists ${name}`));
        return;
      } catch (error) {
        if ((error as { code?: string }).code !== OBJECT_IN_USE || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };
  // Not awaited: the next test need not wait for this one's leftovers.
  attempt().catch((error) => console.error(`test database ${name} was not dropped:`, error));
}
const OBJECT_IN_USE = '55006';

/** A migrated, seeded core with a fake clock on a clean database of the dialect. */
export async function coreOn(dialect: Dialect, options: CoreOptions = {}): Promise<TestCore> {
  if (dialect === 'sqlite') return createTestCore(options);
  const database = await freshPostgresDatabase(process.env.TEST_DATABASE_URL!);
  try {
    const t = await createTestCore({ ...options, url: database.url });
    return {
      ...t,
      close: async () => {
        await t.close();
        await database.drop();
      },
    };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/** A core for one test, closed when the test ends. */
export async function useCore(context: TestContext, dialect: Dialect, options: CoreOptions = {}): Promise<TestCore> {
  const t = await coreOn(dialect, options);
  context.after(() => t.close());
  return t;
}
