import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { runAdmin } from '../../src/admin/run.js';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestCore } from '../helpers/core.js';
import { eventually } from '../helpers/wait.js';
import { sql } from 'kysely';

const mode = (file: string) => statSync(file).mode & 0o777;

function folder(ctx: TestContext): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'database-'));
  ctx.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('a new SQLite database, its -wal and -shm are readable by their owner only, in a folder of mode 0700', async (ctx) => {
  const file = path.join(folder(ctx), 'data', 'cards.db');
  const database = openDatabase(file);
  try {
    await migrateToLatest(database.db);
    for (const f of [file, `${file}-wal`, `${file}-shm`]) assert.equal(mode(f), 0o600, f);
    assert.equal(mode(path.dirname(file)), 0o700);
  } finally {
    await database.close();
  }
});

test('a database file left readable by others is narrowed to 0600 when opened', async (ctx) => {
  const file = path.join(folder(ctx), 'cards.db');
  writeFileSync(file, '');
  chmodSync(file, 0o644);
  const database = openDatabase(file);
  await database.close();
  assert.equal(mode(file), 0o600);
});

test('admin backup writes a copy readable by its owner only', async (ctx) => {
  const dir = folder(ctx);
  const t = await createTestCore({ url: path.join(dir, 'cards.db') });
  ctx.after(() => t.close());
  const out: string[] = [];
  const target = path.join(dir, 'backup.db');
  const code = await runAdmin(['backup', '--to', target], async () => ({ ...t, close: async () => {} }), {
    out: (s) => out.push(s),
    err: (s) => out.push(s),
  });
  assert.equal(code, 0, out.join('\n'));
  assert.equal(mode(target), 0o600);
  assert.ok(statSync(target).size > 0);
});

test('a SQLite database commits without flushing and flushes off the main thread; a worker copies the WAL into the file as it goes', async (ctx) => {
  const file = path.join(folder(ctx), 'cards.db');
  const database = openDatabase(file);
  ctx.after(() => database.close());
  const raw = database.sqlite!;
  assert.equal(raw.pragma('synchronous', { simple: true }), 1, 'NORMAL on the writer: the flush is the dialect’s');
  await sql`create table pages (id integer primary key, body blob not null)`.execute(database.db);
  // About 24 MB, written over a second: the writer's own checkpoint would wait for 40 MB of WAL, so
  // what reaches the database file meanwhile is the checkpointer's.
  const body = Buffer.alloc(120_000, 1);
  for (let i = 0; i < 200; i++) {
    await sql`insert into pages (body) values (${body})`.execute(database.db);
    if (i % 20 === 19) await new Promise((resolve) => setTimeout(resolve, 110));
  }
  // The last checkpoint asked for may still be copying (a slow disk): given until then.
  await eventually('the worker copied the WAL into the file', () => statSync(file).size > 12_000_000);
  const copied = statSync(file).size;
  assert.ok(copied > 12_000_000, `the worker checkpointed along the way (${copied} bytes in the database file)`);
  const { n } = raw.prepare('select count(*) as n from pages').get() as { n: number };
  assert.equal(n, 200);
});

test('a checkpointer that cannot work is said once and stops nothing: writes go on, the writer checkpoints itself', async (ctx) => {
  const dir = folder(ctx);
  const file = path.join(dir, 'cards.db');
  const database = openDatabase(file);
  ctx.after(() => database.close());
  await sql`create table notes (id integer primary key, text text not null)`.execute(database.db);
  // The checkpointer opens the file by name when first asked, and the name is gone by then.
  renameSync(file, path.join(dir, 'moved.db'));
  const warnings: string[] = [];
  const listener = (warning: Error) => warnings.push(warning.message);
  process.on('warning', listener);
  ctx.after(() => process.off('warning', listener));
  for (let i = 1; i <= 6; i++) {
    await sql`insert into notes (id, text) values (${i}, 'kept')`.execute(database.db);
    await new Promise((resolve) => setTimeout(resolve, 60));
  }
  // The worker starts and fails in its own time (a busy machine): its warning is waited for, then a while
  // longer for a second one, which must not come.
  const said = () => warnings.filter((w) => w.startsWith('WAL checkpoint')).length;
  await eventually('the checkpointer said it cannot work', () => said() > 0);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(said(), 1, warnings.join('\n'));
  const { n } = database.sqlite!.prepare('select count(*) as n from notes').get() as { n: number };
  assert.equal(n, 6);
});
