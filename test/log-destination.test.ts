import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { gatheredLogDestination } from '../src/infra/logger.js';

function scratchFile(ctx: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'log-destination-'));
  ctx.after(() => rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, 'app.log');
}

const read = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};

test('gathered log lines wait for 4 kB or 200 ms, then reach the file whole and in order', async (ctx) => {
  const file = scratchFile(ctx);
  const destination = gatheredLogDestination(file);
  destination.write('{"n":1}\n');
  destination.write('{"n":2}\n');
  assert.equal(read(file), '', 'a few lines are held');
  await sleep(450);
  assert.equal(read(file), '{"n":1}\n{"n":2}\n', 'written within 200 ms, in order');

  // Past 4 kB the gathered lines go at once, in the order written; what follows waits again.
  const line = (i: number) => `${JSON.stringify({ i, pad: 'x'.repeat(90) })}\n`;
  const many = Array.from({ length: 45 }, (_, i) => line(i));
  for (const each of many) destination.write(each);
  const written = read(file);
  assert.ok(written.length >= 4096, 'a full gathering is written without waiting');
  assert.ok(many.join('').startsWith(written.slice('{"n":1}\n{"n":2}\n'.length)), 'whole lines, in order');
  destination.flush();
  assert.equal(read(file), `{"n":1}\n{"n":2}\n${many.join('')}`);
});

test('long lines and lines of many-byte characters arrive whole and in order', async (ctx) => {
  const file = scratchFile(ctx);
  const destination = gatheredLogDestination(file);
  const lines = [
    '{"short":"é😀"}\n',
    `${JSON.stringify({ long: 'é'.repeat(10_000) })}\n`, // past the gathering's room: written on its own, after what came before
    `${JSON.stringify({ near: '😀'.repeat(1_500) })}\n`,
    '{"after":1}\n',
  ];
  for (const line of lines) destination.write(line);
  destination.flush();
  assert.equal(read(file), lines.join(''));
});

test('a line written just before process.exit is not lost', (ctx) => {
  const file = scratchFile(ctx);
  const logger = new URL('../src/infra/logger.ts', import.meta.url).href;
  const script = `
    const { createLogger, gatheredLogDestination } = await import(${JSON.stringify(logger)});
    const log = createLogger('info', gatheredLogDestination(${JSON.stringify(file)}));
    log.info('starting');
    log.fatal({ code: 3 }, 'giving up');
    process.exit(3);
  `;
  assert.throws(() => execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: 'pipe' }), {
    status: 3,
  });
  const lines = read(file)
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { msg: string; level: number });
  assert.deepEqual(
    lines.map((l) => [l.level, l.msg]),
    [
      [30, 'starting'],
      [60, 'giving up'],
    ],
  );
});

test('a closed pipe (EPIPE) stops the log, not the process', async () => {
  const logger = new URL('../src/infra/logger.ts', import.meta.url).href;
  const script = `
    const { gatheredLogDestination } = await import(${JSON.stringify(logger)});
    const destination = gatheredLogDestination(1);
    await new Promise((resolve) => setTimeout(resolve, 300)); // the reader is gone by now
    for (let i = 0; i < 2000; i++) destination.write(JSON.stringify({ i, pad: 'x'.repeat(100) }) + '\\n');
    destination.flush();
    process.stderr.write('still running');
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0, stderr);
  assert.match(stderr, /still running$/);
});
