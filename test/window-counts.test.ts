import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createLogger } from '../src/logger.js';
import { WindowCounts } from '../src/window-counts.js';
import { redisUnavailable, testRedis } from './helpers/redis.js';

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
