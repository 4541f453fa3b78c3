import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLogger } from '../src/infra/logger.js';
import { connectRedis } from '../src/infra/redis.js';
import { WindowCounts } from '../src/infra/window-counts.js';
import { capturedLogger } from './helpers/log.js';
import { redisUnavailable, testRedis } from './helpers/redis.js';
import { redisProxy } from './helpers/redis-proxy.js';

// Fixed-window counts in Redis: what the shared rate limits stand on.

describe('window counts in Redis', { skip: redisUnavailable }, () => {
  test('the first hit starts the window with its expiry, in the same step; later hits count in it; a peek counts nothing', async (t) => {
    const redis = testRedis();
    t.after(() => redis.cleanUp());
    const client = await redis.connect();
    const counts = new WindowCounts(client, createLogger('silent'));
    assert.deepEqual(await counts.peek('k'), { count: 0, ttlMs: 0 });
    const first = await counts.hit('k', 60_000);
    assert.equal(first.count, 1);
    assert.ok(first.ttlMs > 0 && first.ttlMs <= 60_000);
    assert.ok((await client.pttl('k')) > 0, 'the key expires');
    assert.equal((await counts.hit('k', 60_000)).count, 2);
    assert.equal((await counts.peek('k')).count, 2);
    assert.equal((await counts.hit('k', 60_000)).count, 3);
  });

  test('a count that lost its expiry (written by an older version, or by hand) gets one at its next hit, so no one is refused for good', async (t) => {
    const redis = testRedis();
    t.after(() => redis.cleanUp());
    const client = await redis.connect();
    await client.set('stuck', '99');
    const counts = new WindowCounts(client, createLogger('silent'));
    assert.deepEqual(await counts.peek('stuck'), { count: 0, ttlMs: 0 }, 'a count without a window counts as none');
    const hit = await counts.hit('stuck', 60_000);
    assert.equal(hit.count, 100);
    assert.ok(hit.ttlMs > 0 && hit.ttlMs <= 60_000);
    assert.ok((await client.pttl('stuck')) > 0);
  });

  test("keys carry the client's prefix: the app's own keys are told apart from anyone else's", async (t) => {
    const redis = testRedis();
    t.after(() => redis.cleanUp());
    const client = await redis.connect();
    await new WindowCounts(client, createLogger('silent')).hit('api:token:abc', 60_000);
    const [key] = await client.keys('*api:token:abc');
    assert.match(key ?? '', /^virtual-cards-test:[0-9a-f-]+:api:token:abc$/);
  });
});

describe('a Redis that hangs', { skip: redisUnavailable }, () => {
  test('costs one command timeout: then counts stay in this process for the breaker window, asking Redis nothing, and go back to Redis after it', async (t) => {
    const keys = testRedis();
    t.after(() => keys.cleanUp());
    const proxy = await redisProxy();
    t.after(() => proxy.close());
    const client = await connectRedis(proxy.url, { keyPrefix: keys.prefix, commandTimeoutMs: 1000 }); // long enough that only a hung Redis misses it on a busy machine
    t.after(() => client.disconnect());
    let now = Date.now();
    const { logger, text } = capturedLogger('info');
    const counts = new WindowCounts(client, logger, { breakerMs: 10_000, now: () => now });

    assert.equal((await counts.hit('k', 60_000)).count, 1);
    assert.equal(proxy.scripts(), 1);
    proxy.hang();
    assert.equal((await counts.hit('k', 60_000)).count, 1, 'given up on after one timeout, counted in the process');
    assert.equal(proxy.scripts(), 2);
    for (let count = 2; count <= 5; count++) assert.equal((await counts.hit('k', 60_000)).count, count);
    assert.deepEqual(await counts.count([{ key: 'k' }, { key: 'other', windowMs: 60_000 }]), [
      { count: 5, ttlMs: 60_000 },
      { count: 1, ttlMs: 60_000 },
    ]);
    assert.equal(proxy.scripts(), 2, 'the hung Redis is asked nothing while the breaker is open');

    // The window over, one count asks Redis again: still hung, one more timeout, and the breaker opens again.
    now += 10_000;
    assert.equal((await counts.hit('k', 60_000)).count, 6);
    assert.equal(proxy.scripts(), 3);
    assert.equal((await counts.hit('k', 60_000)).count, 7);
    assert.equal(proxy.scripts(), 3);

    proxy.resume();
    now += 10_000;
    const back = await counts.hit('k', 60_000);
    assert.equal(proxy.scripts(), 4);
    // In Redis: the first hit, the two given up on (Redis ran them once it answered again), and this one.
    assert.equal(back.count, 4);
    assert.equal(Number(await client.get('k')), 4);
    assert.equal(text().match(/Redis does not answer/g)?.length, 1, 'the outage is logged once');
    assert.match(text(), /Redis answers again: rate limits are shared again/);
  });
});
