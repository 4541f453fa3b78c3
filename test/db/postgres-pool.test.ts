import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.js';
import { freshPostgresSchema, withoutPostgres } from '../core/dialects.js';

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
