import { randomUUID } from 'node:crypto';
import type { TestContext } from 'node:test';
import pg from 'pg';
import { createTestCore, type TestCore } from '../helpers/core.js';
import type { CoreSettings } from '../../src/core/settings.js';

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

/** A migrated, seeded core with a fake clock on a clean database of the dialect. */
export async function coreOn(dialect: Dialect, options: CoreOptions = {}): Promise<TestCore> {
  if (dialect === 'sqlite') return createTestCore(options);
  const baseUrl = process.env.TEST_DATABASE_URL!;
  const schema = await freshPostgresSchema(baseUrl);
  try {
    const t = await whileNoSchemaIsDropped(baseUrl, () => createTestCore({ ...options, url: schema.url }));
    return {
      ...t,
      close: async () => {
        await t.close();
        await schema.drop();
      },
    };
  } catch (error) {
    await schema.drop();
    throw error;
  }
}

/** A core for one test, closed when the test ends. */
export async function useCore(context: TestContext, dialect: Dialect, options: CoreOptions = {}): Promise<TestCore> {
  const t = await coreOn(dialect, options);
  context.after(() => t.close());
  return t;
}
