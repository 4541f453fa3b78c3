import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startLoop } from '../../src/bot/loop.js';
import { createLogger } from '../../src/logger.js';

test('a background loop retries a failing tick and reports each streak of failures to the operator once', async () => {
  const outcomes = ['fail', 'fail', 'fail', 'ok', 'fail', 'ok'];
  const reports: string[] = [];
  let ticks = 0;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const loop = startLoop(1, createLogger('silent'), 'outbox', async (text) => void reports.push(text), async () => {
    const outcome = outcomes[ticks++];
    if (ticks === outcomes.length) finished();
    if (outcome === 'fail') throw new Error(`database locked #${ticks}`);
    return undefined;
  });
  await done;
  await loop.stop();
  assert.deepEqual(reports, ['Bot outbox loop failed (retrying): Error: database locked #1', 'Bot outbox loop failed (retrying): Error: database locked #5']);
});
