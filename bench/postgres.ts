import pg from 'pg';

/** The Postgres the benches use: `BENCH_DATABASE_URL`, else `TEST_DATABASE_URL`, else the local server. */
export const postgresUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Whether `url` answers within 2 s: without it, a bench prints its SQLite figures only. */
export async function postgresReachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}
