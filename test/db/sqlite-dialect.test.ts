import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { openSqlite } from '../../src/db/database.js';
import { sqliteDialect } from '../../src/db/sqlite-dialect.js';

interface Tables {
  notes: { id: number; text: string };
}

/** A Kysely handle on a fresh SQLite file with one table, and the file's path. */
async function notesDatabase(ctx: TestContext): Promise<{ db: Kysely<Tables>; raw: BetterSqlite3.Database; file: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cards-dialect-'));
  const file = path.join(dir, 'notes.db');
  const raw = openSqlite(file);
  const db = new Kysely<Tables>({ dialect: sqliteDialect(raw) });
  ctx.after(async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  await sql`create table notes (id integer primary key, text text not null)`.execute(db);
  await db.insertInto('notes').values({ id: 1, text: 'first' }).execute();
  return { db, raw, file };
}

const textOf = async (db: Kysely<Tables>, id: number) =>
  (await db.selectFrom('notes').select('text').where('id', '=', id).executeTakeFirst())?.text;

/** A transaction held open after `write` until `release` is called. */
function heldTransaction(db: Kysely<Tables>, write: (trx: Kysely<Tables>) => Promise<unknown>) {
  let opened!: () => void;
  const isOpen = new Promise<void>((resolve) => (opened = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const done = db.transaction().execute(async (trx) => {
    await write(trx);
    opened();
    await released;
  });
  return { isOpen, release, done };
}

test('a statement outside a transaction waits for an open one to end, and never sees its uncommitted writes', async (ctx) => {
  const { db } = await notesDatabase(ctx);
  const held = heldTransaction(db, (trx) => trx.updateTable('notes').set({ text: 'changed' }).where('id', '=', 1).execute());
  await held.isOpen;
  let answered = false;
  const during = textOf(db, 1).finally(() => (answered = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(answered, false, 'the read waits while the transaction is open');
  held.release();
  await held.done;
  assert.equal(await during, 'changed', 'and then reads what was committed');
});

test('waiting statements and transactions take their turns in the order they came', async (ctx) => {
  const { db } = await notesDatabase(ctx);
  const first = heldTransaction(db, (trx) => trx.updateTable('notes').set({ text: 'one' }).where('id', '=', 1).execute());
  await first.isOpen;
  const read = textOf(db, 1);
  await new Promise((resolve) => setImmediate(resolve));
  const second = db.transaction().execute((trx) => trx.updateTable('notes').set({ text: 'two' }).where('id', '=', 1).execute());
  first.release();
  await Promise.all([first.done, second]);
  assert.equal(await read, 'one', 'the read came before the second transaction');
  assert.equal(await textOf(db, 1), 'two');
});

test('a transaction takes the write lock when it begins, so another process waits instead of failing half-way', async (ctx) => {
  const { db, file } = await notesDatabase(ctx);
  const other = new BetterSqlite3(file, { timeout: 0 });
  ctx.after(() => other.close());
  const held = heldTransaction(db, async () => undefined);
  await held.isOpen;
  assert.throws(() => other.prepare('begin immediate').run(), /database is locked/);
  held.release();
  await held.done;
  other.prepare('begin immediate').run();
  other.prepare('rollback').run();
});

test('each statement is prepared once and then kept', async (ctx) => {
  const { db, raw } = await notesDatabase(ctx);
  const prepared: string[] = [];
  const prepare = raw.prepare.bind(raw);
  raw.prepare = ((source: string) => {
    prepared.push(source);
    return prepare(source);
  }) as typeof raw.prepare;
  for (const id of [1, 2, 1]) await textOf(db, id);
  assert.equal(prepared.length, 1);
});

test('a connection given back with its transaction still open is rolled back, so the next statements are not caught in it', async (ctx) => {
  const { db, raw } = await notesDatabase(ctx);
  await db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    await connection.updateTable('notes').set({ text: 'left open' }).where('id', '=', 1).execute();
  });
  assert.equal(raw.inTransaction, false);
  assert.equal(await textOf(db, 1), 'first');
});

test('savepoints roll back part of a transaction', async (ctx) => {
  const { db } = await notesDatabase(ctx);
  const trx = await db.startTransaction().execute();
  await trx.insertInto('notes').values({ id: 2, text: 'kept' }).execute();
  const saved = await trx.savepoint('before_third').execute();
  await saved.insertInto('notes').values({ id: 3, text: 'undone' }).execute();
  const restored = await saved.rollbackToSavepoint('before_third').execute();
  await restored.releaseSavepoint('before_third').execute();
  await trx.commit().execute();
  assert.deepEqual(
    (await db.selectFrom('notes').select('id').orderBy('id').execute()).map((r) => r.id),
    [1, 2],
  );
});
