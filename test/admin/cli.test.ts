import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { runAdminCli } from '../helpers/processes.js';

test('the admin CLI --json output is the only thing on its stdout: logs go to stderr', async (ctx) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'admin-cli-'));
  ctx.after(() => rmSync(dir, { recursive: true, force: true }));
  // A fresh database: the first run generates the card-data key and logs it (a warning).
  const env = { DATABASE_URL: path.join(dir, 'cards.db'), CARD_DATA_KEY_FILE: path.join(dir, 'keys', 'card-data.key'), LOG_LEVEL: 'info' };
  const result = await runAdminCli(dir, env, 'users', 'create', '--name', 'Dana');
  assert.equal(result.code, 0, result.output);
  assert.match(result.output, /Generated a new card-data key/, 'the key was generated and logged');
  const answer = JSON.parse(result.stdout) as Record<string, unknown>;
  assert.equal(answer.ok, true);
  assert.equal(typeof answer.token, 'string');
  assert.equal(result.stdout.trim().split('\n').length, 1, 'exactly one line on stdout');
});
