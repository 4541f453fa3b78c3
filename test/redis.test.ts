import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { connectRedis, RedisUnreachableError } from '../src/infra/redis.js';
import { ENTRY, startProcess } from './helpers/processes.js';
import { redisUnavailable, TEST_REDIS_URL, testRedis } from './helpers/redis.js';

// REDIS_URL: one client per process, reached before anything is served.

/** Nothing listens on port 1 of this machine. */
const NOWHERE = 'redis://:hunter2@127.0.0.1:1/0';

describe('a Redis that cannot be reached stops the start', () => {
  test('connectRedis refuses, naming REDIS_URL and the host, never the password', async () => {
    await assert.rejects(connectRedis(NOWHERE, { keyPrefix: 'virtual-cards-test:', commandTimeoutMs: 500 }), (error: unknown) => {
      assert.ok(error instanceof RedisUnreachableError);
      assert.match(error.message, /^REDIS_URL: cannot reach Redis at 127\.0\.0\.1:1 \(.*ECONNREFUSED.*\)$/);
      assert.ok(!error.message.includes('hunter2'));
      return true;
    });
  });

  test('npm run api with an unreachable REDIS_URL exits 1 with that message, before it touches the database', async (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'redis-start-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const api = startProcess(dir, { REDIS_URL: NOWHERE, HTTP_PORT: '0', DATABASE_URL: path.join(dir, 'cards.db') }, ENTRY.api);
    assert.equal(await api.exited, 1);
    assert.match(api.output(), /REDIS_URL: cannot reach Redis at 127\.0\.0\.1:1/);
    assert.ok(!api.output().includes('hunter2'), 'the password is not printed');
    assert.ok(!existsSync(path.join(dir, 'cards.db')), 'no database was created');
  });
});

describe('a reachable REDIS_URL', { skip: redisUnavailable }, () => {
  test('npm run api says it counts its limits in Redis (host only), serves, and a signal stops it cleanly', async (t) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'redis-start-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const keys = testRedis();
    t.after(() => keys.cleanUp());
    const env = {
      REDIS_URL: TEST_REDIS_URL,
      REDIS_KEY_PREFIX: keys.prefix,
      HTTP_PORT: '0',
      DATABASE_URL: path.join(dir, 'cards.db'),
      CARD_DATA_KEY_FILE: path.join(dir, 'card-data.key'),
    };
    const api = startProcess(dir, env, ENTRY.api);
    const line = await api.waitForLog('Rate limits counted in Redis, shared by every instance');
    assert.equal(line.redis, `${new URL(TEST_REDIS_URL).hostname}:${new URL(TEST_REDIS_URL).port || 6379}`);
    const listening = await api.waitForLog('HTTP API listening');
    // A request also gives the process time to take signals.
    assert.equal((await fetch(`${listening.url}/livez`)).status, 200);
    api.child.kill('SIGTERM');
    assert.equal(await api.exited, 0);
    await api.waitForLog('Stopped');
  });
});
