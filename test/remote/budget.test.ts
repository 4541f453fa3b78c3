import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLogger } from '../../src/infra/logger.js';
import { createRequestBudget } from '../../src/remote/budget.js';
import { type Counts, LocalWindowCounts, WindowCounts } from '../../src/infra/window-counts.js';
import { redisUnavailable, testRedis } from '../helpers/redis.js';

// `CARD_SERVICE_MAX_RPS` is the most requests a second the bot sends the card service, all users together:
// with several instances (REDIS_URL set), all instances together.

/**
 * Two "instances" each send `perInstance` requests at once, each through its own budget of `maxPerSecond`;
 * returns when the requests started, in ms from the first.
 */
async function startsOfTwoInstances(counts: [Counts | undefined, Counts | undefined], maxPerSecond: number, perInstance: number) {
  const starts: number[] = [];
  const budgets = counts.map((shared) => createRequestBudget({ maxPerSecond, ...(shared ? { shared } : {}) }));
  await Promise.all(
    budgets.flatMap((budget) =>
      Array.from({ length: perInstance }, () =>
        budget.schedule(async () => {
          starts.push(performance.now());
        }),
      ),
    ),
  );
  const first = Math.min(...starts);
  return starts.map((s) => s - first).sort((a, b) => a - b);
}

describe('the request budget shared by several instances', () => {
  test('with one count shared, two instances together stay within the budget', async () => {
    // 30 requests at 10 a second all together: three full one-second windows, the last beginning 2 s after the first.
    const shared = new LocalWindowCounts();
    const starts = await startsOfTwoInstances([shared, shared], 10, 15);
    // Each instance alone would have begun its last at 1.4 s.
    assert.ok(starts.at(-1)! >= 1_990, `the last began at ${starts.at(-1)!.toFixed(0)} ms`);
  });

  test('in Redis: two instances with their own clients stay within one budget', { skip: redisUnavailable }, async (t) => {
    const redis = testRedis();
    t.after(() => redis.cleanUp());
    const logger = createLogger('silent');
    const a = new WindowCounts(await redis.connect(), logger);
    const b = new WindowCounts(await redis.connect(), logger);
    const starts = await startsOfTwoInstances([a, b], 10, 15);
    // The window opens at Redis's first count, a round trip before the first request begins here (longer on
    // a loaded host): the third opens 2 s after Redis's first count, not after the first start.
    assert.ok(starts.at(-1)! >= 1_900, `the last began at ${starts.at(-1)!.toFixed(0)} ms`);
  });
});
