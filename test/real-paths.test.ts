import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { isInsideFolder, realPathOf } from '../src/infra/real-paths.js';

test('a path is inside a folder by where it really is, not by how its name starts', (ctx) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'real-paths-'));
  ctx.after(() => rmSync(dir, { recursive: true, force: true }));
  const keys = path.join(dir, 'keys');
  mkdirSync(keys);
  mkdirSync(path.join(dir, 'keys-backup'));
  symlinkSync(keys, path.join(dir, 'alias'));

  assert.equal(isInsideFolder(path.join(keys, 'a.db'), keys), true);
  assert.equal(isInsideFolder(keys, keys), true);
  assert.equal(isInsideFolder(path.join(dir, 'alias', 'missing', 'a.db'), keys), true, 'through a link, into a folder not made yet');
  assert.equal(isInsideFolder(path.join(dir, 'keys-backup', 'a.db'), keys), false, 'a sibling whose name starts alike');
  assert.equal(isInsideFolder(path.join(keys, '..', 'a.db'), keys), false);
  assert.equal(isInsideFolder(path.join(dir, '..a.db'), dir), true, 'a name that starts with two dots is still inside');
  assert.equal(realPathOf(path.join(dir, 'alias', 'x', 'y')), path.join(realPathOf(keys), 'x', 'y'));
});
