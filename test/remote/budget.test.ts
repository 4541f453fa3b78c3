import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLogger } from '../../src/infra/logger.js';
import { createRequestBudget, ServiceBusyError } from '../../src/remote/budget.js';
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

describe('the link lane: checks of tokens sent to link a chat, which anyone who writes to the bot can cause', () => {
  /** Records the order calls start in, each named. */
  function recorder() {
    const started: string[] = [];
    const call = (name: string) => async () => {
      started.push(name);
      return name;
    };
    return { started, call };
  }

  test('never ahead of a user’s own requests and watched cards, and at most a small share of the turns', async () => {
    const budget = createRequestBudget({ maxPerSecond: 20 });
    const { started, call } = recorder();
    const at: Record<string, number> = {};
    const t0 = performance.now();
    const timed = (name: string) => async () => {
      at[name] = performance.now() - t0;
      return call(name)();
    };
    const all = [
      ...Array.from({ length: 4 }, (_, i) => budget.schedule(timed(`link${i}`), { lane: 'link' })),
      ...Array.from({ length: 6 }, (_, i) => budget.schedule(timed(`user${i}`))),
      ...Array.from({ length: 3 }, (_, i) => budget.run('watched', () => budget.schedule(timed(`watched${i}`)))),
    ];
    await Promise.all(all);
    // The first turn may go at once to whoever asked first; every other turn to a user's or a watched card's request first.
    const lastOther = started.findLastIndex((name) => !name.startsWith('link'));
    const linksBefore = started.slice(0, lastOther).filter((name) => name.startsWith('link'));
    assert.ok(linksBefore.length <= 1, `order: ${started.join(' ')}`);
    // 2 a second at 20 a second (a tenth of the turns): four checks span 1.5 s at least.
    assert.ok(
      at.link3! - at.link0! >= 1_400,
      `the link checks began at ${['link0', 'link1', 'link2', 'link3'].map((n) => at[n]!.toFixed(0)).join(', ')} ms`,
    );
  });

  test('a full lane refuses a check at once, with a reason; the others are served', async () => {
    const budget = createRequestBudget({ maxPerSecond: 50, linkConcurrency: 1, linkQueue: 2 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // One in flight (its answer held), two waiting: the lane is full.
    const inFlight = budget.schedule(() => held, { lane: 'link' });
    const waiting = [budget.schedule(async () => 'a', { lane: 'link' }), budget.schedule(async () => 'b', { lane: 'link' })];
    const started = performance.now();
    await assert.rejects(
      budget.schedule(async () => 'c', { lane: 'link' }),
      (error: unknown) => {
        assert.ok(error instanceof ServiceBusyError);
        assert.match(error.message, /busy/);
        return true;
      },
    );
    assert.ok(performance.now() - started < 50, 'refused at once');
    // A user's request is not held by a full link lane.
    assert.equal(await budget.schedule(async () => 'user'), 'user');
    release();
    await inFlight;
    assert.deepEqual(await Promise.all(waiting), ['a', 'b']);
  });

  test('a request still waiting for its turn when its signal fires leaves the queue and is never made', async () => {
    const budget = createRequestBudget({ maxPerSecond: 2 });
    const { started, call } = recorder();
    await budget.schedule(call('first'));
    const t0 = performance.now();
    const late = [0, 1, 2].map((i) => budget.schedule(call(`late${i}`), { signal: AbortSignal.timeout(200) }));
    const results = await Promise.allSettled(late);
    // The first of them gets the next turn (500 ms after the first request): its signal fired before it.
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected', 'rejected'],
    );
    assert.ok(performance.now() - t0 < 450, 'given up at the signal, not at the turn');
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    assert.deepEqual(started, ['first'], 'none of them was made later');
    assert.equal(budget.waiting, 0);
  });
});
