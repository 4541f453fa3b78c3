import { randomUUID } from 'node:crypto';
import type { TestContext } from 'node:test';
import pg from 'pg';
import { createTestCore, type TestCore } from '../helpers/core.js';
import type { CoreSettings } from '../../src/core/settings.js';

export type Dialect = 'sqlite' | 'postgres';

/** SQLite always; Postgres as well when TEST_DATABASE_URL names one. Each suite runs once per dialect. */
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

/** A Postgres schema of its own, dropped by the returned function. */
export async function freshPostgresSchema(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `test_${randomUUID().replaceAll('-', '')}`;
  const run = async (text: string) => {
    const client = new pg.Client({ connectionString: baseUrl });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  await run(`create schema ${schema}`);
  return { url: withSearchPath(baseUrl, schema), drop: () => run(`drop schema ${schema} cascade`) };
}

/**
 * Kysely's migrator introspects the tables of every schema; when another test process drops its
 * schema during that query, Postgres reports a schema "does not exist". Only tests drop schemas
 * concurrently, so only they retry.
 */
async function createTestCoreRetrying(options: CoreOptions & { url: string }): Promise<TestCore> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await createTestCore(options);
    } catch (error) {
      if (attempt >= 5 || !(error instanceof Error) || !/schema ".*" does not exist/.test(error.message)) throw error;
    }
  }
}

/** A migrated, seeded core with a fake clock on a clean database of the dialect. */
export async function coreOn(dialect: Dialect, options: CoreOptions = {}): Promise<TestCore> {
  if (dialect === 'sqlite') return createTestCore(options);
  const schema = await freshPostgresSchema(process.env.TEST_DATABASE_URL!);
  try {
    const t = await createTestCoreRetrying({ ...options, url: schema.url });
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
