import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { runAdmin } from '../../src/admin/run.js';
import { openDatabase } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestCore } from '../helpers/core.js';

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
