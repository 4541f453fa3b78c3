import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startLoop } from '../../src/infra/loop.js';
import { capturedLogger } from '../helpers/log.js';

test('background loops back off during an outage and log once per outage, then once when recovered', async () => {
  const { logger, text } = capturedLogger('info');
  const reports: string[] = [];
  const at: number[] = [];
  // Seven failures (an outage), then it works again.
  const failuresWanted = 7;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const loop = startLoop(
    5,
    logger,
    'outbox',
    async (r) => void reports.push(r),
    async () => {
      at.push(performance.now());
      if (at.length <= failuresWanted) throw new Error(`Telegram unreachable #${at.length}`);
      finished();
      return undefined;
    },
    { maxBackoffMs: 80 },
  );
  // Wakes during the outage do not cut the back-off short.
  const waker = setInterval(() => loop.wake(), 1);
  await done;
  clearInterval(waker);
  await loop.stop();

  const gaps = at.slice(1, failuresWanted + 1).map((t, i) => t - at[i]!);
  // 10, 20, 40, 80 ms, then capped at 80 (a timer may fire a hair early).
  const expected = [10, 20, 40, 80, 80, 80, 80];
  for (const [i, gap] of gaps.entries()) {
    assert.ok(gap >= expected[i]! - 2, `gap ${i} was ${gap} ms, expected about ${expected[i]} ms: ${gaps.join(', ')}`);
  }

  const lines = text()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { level: number; msg: string; failures?: number; err?: { message: string } });
  const failed = lines.filter((l) => l.level >= 40);
  assert.equal(failed.length, 1, 'one warning or error for the whole outage');
  assert.equal(failed[0]!.err?.message, 'Telegram unreachable #1');
  const recovered = lines.filter((l) => l.level === 30);
  assert.equal(recovered.length, 1, 'one line when it recovers');
  assert.match(recovered[0]!.msg, /^background loop recovered after 7 failures \/ [\d.]+ s$/);
  assert.equal(recovered[0]!.failures, 7);
  assert.deepEqual(reports, ['Bot outbox loop failed (retrying): Error: Telegram unreachable #1']);
});
