import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import type BetterSqlite3 from 'better-sqlite3';
import { Database as BetterSqlite3Database } from '../../src/db/better-sqlite3.js';
import { Kysely, sql } from 'kysely';
import { openSqlite, openSqliteReader } from '../../src/db/database.js';
import { sqliteDialect, type GroupCommitOptions, type GroupCommitStats } from '../../src/db/sqlite/index.js';

interface Tables {
  notes: { id: number; text: string };
}

/** A Kysely handle on a fresh SQLite file with one table, and the file's path. */
async function notesDatabase(ctx: TestContext): Promise<{ db: Kysely<Tables>; raw: BetterSqlite3.Database; file: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cards-dialect-'));
  const file = path.join(dir, 'notes.db');
  const raw = openSqlite(file);
  const db = new Kysely<Tables>({ dialect: sqliteDialect(raw, { groupCommit: { maxOpenMs: 60_000 } }) });
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

test('without a reader, a read waits for the open batch to commit, and transactions that come meanwhile join that batch', async (ctx) => {
  const { db } = await notesDatabase(ctx);
  const first = heldTransaction(db, (trx) => trx.updateTable('notes').set({ text: 'one' }).where('id', '=', 1).execute());
  await first.isOpen;
  const read = textOf(db, 1);
  await new Promise((resolve) => setImmediate(resolve));
  const second = db.transaction().execute((trx) => trx.updateTable('notes').set({ text: 'two' }).where('id', '=', 1).execute());
  first.release();
  await Promise.all([first.done, second]);
  assert.equal(await read, 'two', 'the read came after the one commit both transactions shared');
});

test('a transaction takes the write lock when it begins, so another process waits instead of failing half-way', async (ctx) => {
  const { db, file } = await notesDatabase(ctx);
  const other = new BetterSqlite3Database(file, { timeout: 0 });
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

test('rows read through the driver are the objects better-sqlite3 makes: keys in column order, a later column of the same name winning', async (ctx) => {
  const { db, raw } = await notesDatabase(ctx);
  const query = sql<Record<string, unknown>>`select id, text as "say ""hi""", 7 as id, null as empty, x'00ff' as bytes from notes`;
  const [row] = (await query.execute(db)).rows;
  const [expected] = raw.prepare(query.compile(db).sql).all() as Record<string, unknown>[];
  assert.deepEqual(row, expected);
  assert.deepEqual(Object.keys(row!), ['id', 'say "hi"', 'empty', 'bytes']);
  assert.equal(row!.id, 7);
  assert.deepEqual(row!.bytes, Buffer.from([0, 255]));
  // A column named `__proto__` is a key like any other, not the row's prototype.
  const [odd] = (await sql<Record<string, unknown>>`select 1 as "__proto__", text from notes`.execute(db)).rows;
  assert.equal(Object.getPrototypeOf(odd), Object.prototype);
  assert.deepEqual(Object.entries(odd!), [
    ['__proto__', 1],
    ['text', 'first'],
  ]);
  // Statements that return rows and those that do not, each run again from the cache.
  for (const id of [10, 11]) {
    assert.deepEqual(await db.insertInto('notes').values({ id, text: 'n' }).returning(['text', 'id']).execute(), [{ text: 'n', id }]);
    assert.equal((await db.updateTable('notes').set({ text: 'm' }).where('id', '=', id).executeTakeFirst()).numUpdatedRows, 1n);
  }
});

test('rows follow a schema change made after their statement was prepared, by this handle or another', async (ctx) => {
  const { db, file } = await notesDatabase(ctx);
  const everything = () => db.selectFrom('notes').selectAll().where('id', '=', 1).execute();
  const named = () => db.selectFrom('notes').select(['text', 'id']).where('id', '=', 1).execute();
  assert.deepEqual(await everything(), [{ id: 1, text: 'first' }]);
  assert.deepEqual(await named(), [{ text: 'first', id: 1 }]);
  // Another handle (as a migration in another process) adds a column and swaps two.
  const other = new BetterSqlite3Database(file);
  other.exec(`alter table notes add column tag text not null default 'x'`);
  assert.deepEqual(await everything(), [{ id: 1, text: 'first', tag: 'x' }]);
  other.exec(`create table notes2 (text text not null, id integer primary key, tag text); insert into notes2 select text, id, tag from notes;
    drop table notes; alter table notes2 rename to notes`);
  other.close();
  assert.deepEqual(await everything(), [{ text: 'first', id: 1, tag: 'x' }]);
  assert.deepEqual(await named(), [{ text: 'first', id: 1 }]);
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

/** A Kysely handle with group commit on a fresh notes file, with its statistics, a reader and a record of each commit. */
async function groupCommitDatabase(
  ctx: TestContext,
  groupCommit: GroupCommitOptions = {},
  flush?: () => Promise<void>,
  onFlushFailed?: (error: unknown) => void,
) {
  const dir = mkdtempSync(path.join(tmpdir(), 'cards-group-'));
  const file = path.join(dir, 'notes.db');
  const raw = openSqlite(file);
  raw.exec('create table notes (id integer primary key, text text not null)');
  raw.exec("insert into notes values (1, 'first')");
  const events: string[] = [];
  const failNextCommit = { armed: false };
  const prepare = raw.prepare.bind(raw);
  raw.prepare = ((source: string) => {
    const statement = prepare(source);
    if (source !== 'commit') return statement;
    const run = statement.run.bind(statement);
    statement.run = ((...args: unknown[]) => {
      if (failNextCommit.armed) {
        failNextCommit.armed = false;
        throw new Error('disk I/O error');
      }
      const result = run(...args);
      events.push('commit');
      return result;
    }) as typeof statement.run;
    return statement;
  }) as typeof raw.prepare;
  const stats: GroupCommitStats = { commits: 0, operations: 0, largest: 0 };
  // No time cap unless a test sets one: a busy test machine may pause longer than the service's 20 ms between batch mates.
  const dialect = sqliteDialect(raw, {
    reader: openSqliteReader(file),
    stats,
    groupCommit: { maxOpenMs: 60_000, ...groupCommit },
    flush,
    onFlushFailed,
  });
  const db = new Kysely<Tables>({ dialect });
  ctx.after(async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  const insert = (id: number) =>
    db.transaction().execute(async (trx) => {
      await trx
        .insertInto('notes')
        .values({ id, text: `note ${id}` })
        .execute();
      return id;
    });
  const ids = async () => (await db.selectFrom('notes').select('id').orderBy('id').execute()).map((r) => r.id);
  return { db, dialect, raw, stats, events, failNextCommit, insert, ids };
}

test('transactions under way at one moment share one commit, and none is reported done before that commit', async (ctx) => {
  const g = await groupCommitDatabase(ctx);
  const done = await Promise.all(
    [2, 3, 4, 5, 6].map((id) =>
      g.insert(id).then((value) => {
        g.events.push(`done ${value}`);
        return value;
      }),
    ),
  );
  assert.deepEqual(done, [2, 3, 4, 5, 6]);
  assert.deepEqual(g.stats, { commits: 1, operations: 5, largest: 5 });
  assert.equal(g.events[0], 'commit', 'the commit came before any member heard it was done');
  assert.deepEqual(await g.ids(), [1, 2, 3, 4, 5, 6]);
});

test('a member that fails is rolled back alone; its batch mates commit', async (ctx) => {
  const g = await groupCommitDatabase(ctx);
  const outcomes = await Promise.allSettled([
    g.insert(2),
    g.db.transaction().execute(async (trx) => {
      await trx.insertInto('notes').values({ id: 3, text: 'undone' }).execute();
      throw new Error('refused');
    }),
    g.insert(1), // a duplicate key: this statement fails, the member with it
    g.insert(4),
  ]);
  assert.deepEqual(
    outcomes.map((o) => o.status),
    ['fulfilled', 'rejected', 'rejected', 'fulfilled'],
  );
  assert.equal(g.stats.commits, 1);
  assert.equal(g.stats.operations, 2);
  assert.deepEqual(await g.ids(), [1, 2, 4]);
});

test('a write outside a transaction joins the batch and is reported once committed', async (ctx) => {
  const g = await groupCommitDatabase(ctx);
  await Promise.all([g.insert(2), g.db.insertInto('notes').values({ id: 3, text: 'alone' }).execute(), g.insert(4)]);
  assert.deepEqual(g.stats, { commits: 1, operations: 3, largest: 3 });
  assert.deepEqual(await g.ids(), [1, 2, 3, 4]);
});

test('a lone transaction is committed without waiting for company', async (ctx) => {
  const g = await groupCommitDatabase(ctx);
  assert.equal(await g.insert(2), 2);
  assert.equal(g.stats.commits, 1);
  assert.equal(await g.insert(3), 3);
  assert.equal(g.stats.commits, 2);
});

test('a batch is capped: more transactions than the cap take several commits', async (ctx) => {
  const g = await groupCommitDatabase(ctx, { maxOperations: 3 });
  await Promise.all([2, 3, 4, 5, 6, 7, 8].map((id) => g.insert(id)));
  assert.equal(g.stats.largest, 3);
  assert.equal(g.stats.operations, 7);
  assert.ok(g.stats.commits >= 3);
  assert.deepEqual(await g.ids(), [1, 2, 3, 4, 5, 6, 7, 8]);
});

test('a batch is capped in time too: once open past the cap it takes no newcomer', async (ctx) => {
  const g = await groupCommitDatabase(ctx, { maxOpenMs: 0 });
  await Promise.all([2, 3, 4, 5].map((id) => g.insert(id)));
  assert.deepEqual(g.stats, { commits: 4, operations: 4, largest: 1 });
  assert.deepEqual(await g.ids(), [1, 2, 3, 4, 5]);
});

test('a commit that fails fails every member of its batch, and none of their writes stays', async (ctx) => {
  const g = await groupCommitDatabase(ctx);
  g.failNextCommit.armed = true;
  const outcomes = await Promise.allSettled([g.insert(2), g.insert(3), g.insert(4)]);
  assert.deepEqual(
    outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'done')),
    ['Error: disk I/O error', 'Error: disk I/O error', 'Error: disk I/O error'],
  );
  assert.equal(g.raw.inTransaction, false);
  assert.deepEqual(await g.ids(), [1]);
  assert.equal(await g.insert(5), 5, 'the next batch commits as usual');
  assert.deepEqual(await g.ids(), [1, 5]);
});

test('with a reader, a read answers at once during an open batch, with the last commit only', async (ctx) => {
  const g = await groupCommitDatabase(ctx);
  const held = heldTransaction(g.db, (trx) => trx.updateTable('notes').set({ text: 'uncommitted' }).where('id', '=', 1).execute());
  await held.isOpen;
  assert.equal(await textOf(g.db, 1), 'first');
  held.release();
  await held.done;
  assert.equal(await textOf(g.db, 1), 'uncommitted');
});

test('two handles of one process on one file take turns without meeting in the busy handler (which would block the event loop)', async (ctx) => {
  const { db, file } = await notesDatabase(ctx);
  const second = new Kysely<Tables>({ dialect: sqliteDialect(openSqlite(file)) });
  ctx.after(() => second.destroy());
  const held = heldTransaction(db, (trx) => trx.updateTable('notes').set({ text: 'first handle' }).where('id', '=', 1).execute());
  await held.isOpen;
  const started = Date.now();
  const other = second.transaction().execute((trx) => trx.insertInto('notes').values({ id: 2, text: 'second handle' }).execute());
  await new Promise((resolve) => setTimeout(resolve, 20));
  held.release();
  await Promise.all([held.done, other]);
  assert.ok(Date.now() - started < 2_000, 'no busy-handler wait');
  assert.equal(await textOf(db, 2), 'second handle');
  assert.equal(await textOf(second, 1), 'first handle');
});

/**
 * A flush that ends only when told: `end()` ends the oldest flush under way (or fails it), and `started`
 * counts the flushes begun. Each start and end is written in `events`.
 */
function heldFlushes(events: string[]) {
  const open: { resolve: () => void; reject: (error: Error) => void }[] = [];
  let started = 0;
  return {
    flush: () =>
      new Promise<void>((resolve, reject) => {
        started++;
        events.push('flush');
        open.push({ resolve, reject });
      }),
    get started() {
      return started;
    },
    end(error?: Error) {
      const flush = open.shift();
      assert.ok(flush, 'a flush is under way');
      events.push(error ? 'flush failed' : 'flushed');
      if (error) flush.reject(error);
      else flush.resolve();
    },
  };
}

/** Lets the event loop run a few turns: whatever could happen without a flush ending has happened. */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** Whether a promise has settled yet. */
function watch<T>(promise: Promise<T>): { readonly done: boolean; promise: Promise<T> } {
  const state = { done: false, promise };
  promise.then(
    () => (state.done = true),
    () => (state.done = true),
  );
  return state;
}

test('with a flush, the writer commits without waiting for the disk, and nobody hears of a commit before a flush begun after it has ended', async (ctx) => {
  const events: string[] = [];
  const flushes = heldFlushes(events);
  const g = await groupCommitDatabase(ctx, {}, flushes.flush);
  g.events.length = 0;
  assert.equal(g.raw.pragma('synchronous', { simple: true }), 1, 'NORMAL: the commit is not flushed by SQLite');

  const first = watch(g.insert(2));
  await settle();
  assert.deepEqual(g.events, ['commit'], 'committed');
  assert.equal(flushes.started, 1);
  assert.equal(first.done, false, 'not told before its flush ends');

  // The next batch does not wait for the disk: it commits while the first flush is under way, and
  // waits for a flush that begins after its commit.
  const second = watch(g.insert(3));
  await settle();
  assert.deepEqual(g.events, ['commit', 'commit']);
  assert.equal(flushes.started, 1, 'one flush at a time');
  assert.equal(second.done, false);

  flushes.end();
  assert.equal(await first.promise, 2);
  await settle();
  assert.equal(second.done, false, 'the first flush began before the second commit');
  assert.equal(flushes.started, 2);
  flushes.end();
  assert.equal(await second.promise, 3);
  assert.deepEqual(events, ['flush', 'flushed', 'flush', 'flushed']);
});

test('with a flush, a read that may have seen a commit not yet durable waits for its flush', async (ctx) => {
  const flushes = heldFlushes([]);
  const g = await groupCommitDatabase(ctx, {}, flushes.flush);
  const write = watch(g.insert(2));
  await settle();
  const select = 'select "id" from "notes" where "id" = ?';
  assert.equal(g.dialect.readNow(select, [2]), undefined, 'no read at once while a commit is not durable');
  const read = watch(g.db.selectFrom('notes').select('id').where('id', '=', 2).executeTakeFirst());
  await settle();
  assert.equal(read.done, false, 'the read saw the commit: it waits for the flush');
  flushes.end();
  assert.deepEqual(await read.promise, { id: 2 });
  await write.promise;
  assert.deepEqual(g.dialect.readNow(select, [2]), [{ id: 2 }], 'with every commit durable, reads are at once again');
});

test('with a flush, a failed flush fails the commits waiting for it, and every write after it, and is told once', async (ctx) => {
  const flushes = heldFlushes([]);
  const told: unknown[] = [];
  const g = await groupCommitDatabase(ctx, {}, flushes.flush, (error) => told.push(error));
  const write = g.insert(2);
  await settle();
  flushes.end(new Error('EIO: i/o error, fdatasync'));
  await assert.rejects(write, /EIO/);
  await assert.rejects(g.insert(3), /EIO/, 'nothing more is committed once durability is in doubt');
  await assert.rejects(g.db.insertInto('notes').values({ id: 4, text: 'alone' }).execute(), /EIO/);
  assert.deepEqual(
    told.map((error) => String(error)),
    ['Error: EIO: i/o error, fdatasync'],
  );
});
