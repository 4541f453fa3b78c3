import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest, pendingMigrations } from '../../src/db/migrate.js';
import { freshPostgresSchema, whileNoSchemaIsDropped, withoutPostgres } from '../core/dialects.js';

describe('migrations', () => {
  test('a fresh SQLite database migrates once; migrating again applies nothing', async () => {
    const database = openDatabase(':memory:');
    try {
      const applied = await migrateToLatest(database.db);
      assert.ok(applied.length >= 1);
      assert.deepEqual(await migrateToLatest(database.db), []);
      const tables = (await database.db.introspection.getTables()).map((t) => t.name);
      for (const table of ['accounts', 'journals', 'entries', 'cards', 'card_transactions', 'outbox'])
        assert.ok(tables.includes(table), table);
    } finally {
      await database.close();
    }
  });

  test('migrations started at once on one fresh Postgres schema all succeed, each applied once', {
    skip: withoutPostgres,
  }, async () => {
    const baseUrl = process.env.TEST_DATABASE_URL!;
    const schema = await freshPostgresSchema(baseUrl);
    const databases = Array.from({ length: 4 }, () => openDatabase(schema.url));
    try {
      const applied = await whileNoSchemaIsDropped(baseUrl, () => Promise.all(databases.map((d) => migrateToLatest(d.db))));
      const all = applied.flat();
      assert.ok(all.length >= 1);
      assert.equal(new Set(all).size, all.length, 'no migration ran twice');
      assert.equal(applied.filter((names) => names.length > 0).length, 1, 'one of them applied them all');
    } finally {
      for (const d of databases) await d.close();
      await schema.drop();
    }
  });

  test("a migration is not upset by another schema's tables changing meanwhile", { skip: withoutPostgres }, async () => {
    // Kysely's own check for its tables lists every column of every schema; a column dropped elsewhere
    // (renamed, dropped) between its listing and its lookup failed a migration here ("column … does not exist").
    const baseUrl = process.env.TEST_DATABASE_URL!;
    const other = await freshPostgresSchema(baseUrl);
    const changing = new pg.Client({ connectionString: other.url });
    await changing.connect();
    await changing.query('create table churn (id integer, brief integer)');
    let migrating = true;
    const churn = (async () => {
      let rounds = 0;
      while (migrating || rounds < 50) {
        // Renamed, not dropped and added: a table keeps the places of dropped columns, 1,600 at most.
        await changing.query('alter table churn rename column brief to short');
        await changing.query('alter table churn rename column short to brief');
        rounds++;
      }
      return rounds;
    })();
    try {
      for (let i = 0; i < 6; i++) {
        const schema = await freshPostgresSchema(baseUrl);
        const database = openDatabase(schema.url);
        try {
          assert.ok((await whileNoSchemaIsDropped(baseUrl, () => migrateToLatest(database.db))).length >= 1);
          assert.deepEqual(await pendingMigrations(database.db), []);
        } finally {
          await database.close();
          await schema.drop();
        }
      }
    } finally {
      migrating = false;
      const churned = await churn.catch((error: unknown) => error);
      await changing.end();
      await other.drop();
      assert.ok(typeof churned === 'number' && churned >= 50, String(churned));
    }
  });

  test('Postgres schemas migrate independently, each finding its own migration tables', {
    skip: withoutPostgres,
  }, async () => {
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
