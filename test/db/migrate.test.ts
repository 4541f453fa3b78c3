import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { freshPostgresSchema, whileNoSchemaIsDropped } from '../core/dialects.js';

describe('migrations', () => {
  test('a fresh SQLite database migrates once; migrating again applies nothing', async () => {
    const database = openDatabase(':memory:');
    try {
      const applied = await migrateToLatest(database.db);
      assert.ok(applied.length >= 1);
      assert.deepEqual(await migrateToLatest(database.db), []);
      const tables = (await database.db.introspection.getTables()).map((t) => t.name);
      for (const table of ['accounts', 'journals', 'entries', 'cards', 'card_transactions', 'outbox']) assert.ok(tables.includes(table), table);
    } finally {
      await database.close();
    }
  });

  test('Postgres schemas migrate independently, each finding its own migration tables', { skip: !process.env.TEST_DATABASE_URL }, async () => {
    const baseUrl = process.env.TEST_DATABASE_URL!;
    const first = await freshPostgresSchema(baseUrl);
    const second = await freshPostgresSchema(baseUrl);
    const a = openDatabase(first.url);
    const b = openDatabase(second.url);
    try {
      const migrate = (db: typeof a.db) => whileNoSchemaIsDropped(baseUrl, () => migrateToLatest(db));
      const applied = await migrate(a.db);
      assert.ok(applied.length >= 1);
      assert.deepEqual(await migrate(b.db), applied);
      assert.deepEqual(await migrate(a.db), []);
      assert.deepEqual(await migrate(b.db), []);
    } finally {
      await a.close();
      await b.close();
      await first.drop();
      await second.drop();
    }
  });
});
