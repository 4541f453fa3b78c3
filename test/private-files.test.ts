import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createPrivateFileOnce, replacePrivateFile } from '../src/infra/private-files.js';

const TSX = import.meta.resolve('tsx');
const WRITER = fileURLToPath(new URL('./private-files-writer.ts', import.meta.url));

function folder(ctx: TestContext): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'private-files-'));
  ctx.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('a private file is created once, mode 0600 in a new folder of mode 0700; a second writer changes nothing', (ctx) => {
  const file = path.join(folder(ctx), 'new', 'secret');
  assert.equal(createPrivateFileOnce(file, 'first\n'), true);
  assert.equal(createPrivateFileOnce(file, 'second\n'), false);
  assert.equal(readFileSync(file, 'utf8'), 'first\n');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(statSync(path.dirname(file)).mode & 0o777, 0o700);
  assert.deepEqual(readdirSync(path.dirname(file)), ['secret'], 'no temporary file is left');
});

test('replacing a private file swaps it whole and narrows it to 0600', (ctx) => {
  const file = path.join(folder(ctx), 'secret');
  writeFileSync(file, 'old\n', { mode: 0o644 });
  replacePrivateFile(file, 'new\n');
  assert.equal(readFileSync(file, 'utf8'), 'new\n');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(path.dirname(file)), ['secret']);
});

test('processes creating the same files at once: each file is created by one of them, and none reads one half-written', async (ctx) => {
  const dir = folder(ctx);
  const count = 300;
  const writers = Array.from({ length: 4 }, () => {
    const child = spawn(process.execPath, ['--import', TSX, WRITER, dir, String(count)], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const ready = new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.startsWith('ready\n')) resolve();
      }),
    );
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    const done = new Promise<{ created: number; torn: number }>((resolve, reject) =>
      child.on('close', (code) =>
        code === 0 ? resolve(JSON.parse(out.trim().split('\n').at(-1)!)) : reject(new Error(`writer exited with ${code}: ${err}`)),
      ),
    );
    return { child, ready, done };
  });
  await Promise.all(writers.map((w) => w.ready));
  for (const w of writers) w.child.stdin.end('go\n');
  const results = await Promise.all(writers.map((w) => w.done));
  assert.equal(
    results.reduce((sum, r) => sum + r.created, 0),
    count,
  );
  assert.equal(
    results.reduce((sum, r) => sum + r.torn, 0),
    0,
  );
  assert.equal(readdirSync(dir).length, count, 'no temporary file is left');
});
