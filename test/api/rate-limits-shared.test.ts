import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, test, type TestContext } from 'node:test';
import { startHttpApi, type RunningHttpApi } from '../../src/api/start.js';
import { loadConfig } from '../../src/app/config.js';
import { hashToken } from '../../src/core/keys/secrets.js';
import { createLogger, type Logger } from '../../src/infra/logger.js';
import { connectRedis, type Redis } from '../../src/infra/redis.js';
import { freshPostgresSchema, whileNoSchemaIsDropped } from '../core/dialects.js';
import { createTestCore, newCustomer, type TestCore } from '../helpers/core.js';
import { startTestApi } from '../helpers/http.js';
import { capturedLogger } from '../helpers/log.js';
import { redisUnavailable, testRedis } from '../helpers/redis.js';
import { redisProxy } from '../helpers/redis-proxy.js';

// Several instances on one database (README: REDIS_URL): the API's limits are one count for all of them.

const TOO_MANY = /^Too many requests; retry in \d+ seconds?$/;

interface Instance {
  runtime: TestCore;
  api: RunningHttpApi;
  redis: Redis;
  get(path: string, token?: string): Promise<Response>;
}

/** One database for the instances: a Postgres schema of its own when TEST_DATABASE_URL names one, else an SQLite file. */
async function sharedDatabase(t: TestContext): Promise<{ url: string; migrate<T>(run: () => Promise<T>): Promise<T> }> {
  const baseUrl = process.env.TEST_DATABASE_URL;
  if (baseUrl) {
    const schema = await freshPostgresSchema(baseUrl);
    t.after(() => schema.drop());
    return { url: schema.url, migrate: (run) => whileNoSchemaIsDropped(baseUrl, run) };
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'shared-limits-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { url: path.join(dir, 'cards.db'), migrate: (run) => run() };
}

/**
 * Two instances as `npm run api` starts them (`startHttpApi` with the settings' limits), each with its own
 * core and its own Redis client, on one database and one Redis.
 */
async function twoInstances(
  t: TestContext,
  settings: Record<string, string>,
  logger: Logger = createLogger('silent'),
): Promise<Instance[]> {
  const database = await sharedDatabase(t);
  const redis = testRedis();
  const instances: Instance[] = [];
  t.after(async () => {
    for (const { api, runtime } of instances) {
      await api.close();
      await runtime.close();
    }
    await redis.cleanUp();
  });
  const config = loadConfig({ HTTP_PORT: '0', ...settings });
  for (let i = 0; i < 2; i++) {
    const runtime = await database.migrate(() => createTestCore({ url: database.url }));
    const client = await redis.connect();
    const api = await startHttpApi({ runtime, config, logger, redis: client });
    const get = (route: string, token?: string) =>
      fetch(api.url + route, { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
    instances.push({ runtime, api, redis: client, get });
  }
  return instances;
}

async function assertTooMany(response: Response, maxRetryAfter: number): Promise<number> {
  assert.equal(response.status, 429);
  assert.match(((await response.json()) as { message: string }).message, TOO_MANY);
  const retryAfter = Number(response.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= maxRetryAfter, `Retry-After ${retryAfter}`);
  return retryAfter;
}

/** Resolves once an ioredis client's status is `status` (5 s at the most). */
async function untilStatus(client: Redis, status: Redis['status']): Promise<void> {
  for (let waited = 0; client.status !== status; waited += 10) {
    if (waited >= 5_000) throw new Error(`the Redis client stayed ${client.status}, never ${status}`);
    await sleep(10);
  }
}

describe('with REDIS_URL, several instances hold the API limits together', { skip: redisUnavailable }, () => {
  test("a token's requests split across two instances are refused once their sum passes API_RATE_LIMIT_PER_TOKEN, on both", async (t) => {
    const [a, b] = await twoInstances(t, { API_RATE_LIMIT_PER_TOKEN: '4' });
    const alice = await newCustomer(a!.runtime, 100_000, 'Alice');
    const bob = await newCustomer(b!.runtime, 100_000, 'Bob');
    for (const instance of [a, b, a, b]) assert.equal((await instance!.get('/api/v1/health', alice.token)).status, 200);
    // Each instance has seen only two: counted alone, both would let more through.
    await assertTooMany(await a!.get('/api/v1/health', alice.token), 60);
    await assertTooMany(await b!.get('/api/v1/wallet/balance', alice.token), 60);
    // Another token goes on, on both.
    assert.equal((await a!.get('/api/v1/health', bob.token)).status, 200);
    assert.equal((await b!.get('/api/v1/health', bob.token)).status, 200);

    // Counted by the token's hash: no token in a key, only the app's names under its prefix.
    const prefix = a!.redis.options.keyPrefix!;
    const keys = (await a!.redis.keys(`${prefix}*`)).map((key) => key.slice(prefix.length)).sort();
    // A valid token's requests are counted per token only, not against the address.
    assert.deepEqual(keys, [`api:token:${hashToken(alice.token)}`, `api:token:${hashToken(bob.token)}`].sort());
  });

  test("failed authentications from one address split across two instances use up the address's on both; a valid token from it goes on", async (t) => {
    const [a, b] = await twoInstances(t, { API_AUTH_FAILURES_PER_ADDRESS: '3' });
    const alice = await newCustomer(a!.runtime);
    assert.equal((await b!.get('/api/v1/health', alice.token)).status, 200);
    for (const [instance, guess] of [
      [a, 'guess-1'],
      [b, 'guess-2'],
      [a, undefined],
    ] as const) {
      assert.equal((await instance!.get('/api/v1/wallet/balance', guess)).status, 401);
    }
    // The window is 15 minutes; the instance that saw one failure of three refuses as well as the other.
    assert.ok((await assertTooMany(await b!.get('/api/v1/wallet/balance', 'guess-4'), 900)) > 60);
    await assertTooMany(await a!.get('/api/v1/wallet/balance'), 900);
    // Someone else behind the same address (one NAT, one proxy) is not locked out by them.
    assert.equal((await b!.get('/api/v1/wallet/balance', alice.token)).status, 200);
    assert.equal((await a!.get('/api/v1/wallet/balance', alice.token)).status, 200);
  });

  test('an authenticated request checks its limits in one round trip; a hung Redis costs one request one timeout, the next none', async (t) => {
    const keys = testRedis();
    t.after(() => keys.cleanUp());
    const proxy = await redisProxy();
    t.after(() => proxy.close());
    const client = await connectRedis(proxy.url, { keyPrefix: keys.prefix, commandTimeoutMs: 1000 }); // long enough that only a hung Redis misses it on a busy machine
    t.after(() => client.disconnect());
    const api = await startTestApi({
      server: { limits: { perTokenPerMinute: 3, perAddressPerMinute: 1000, authFailuresPerAddress: 1000 }, redis: client },
    });
    t.after(() => api.close());
    const alice = await newCustomer(api.t);
    const health = () => api.call('GET', '/api/v1/health', { token: alice.token });

    assert.equal((await health()).status, 200);
    assert.equal(proxy.scripts(), 1, 'token and failed authentications counted in one script');
    assert.equal(Number(await client.get(`api:token:${hashToken(alice.token)}`)), 1);

    proxy.hang();
    assert.equal((await health()).status, 200, 'given up on after one timeout');
    assert.equal(proxy.scripts(), 2);
    // Counted in the process from here: the hung request was its first, these its second and third, then the limit.
    assert.equal((await health()).status, 200);
    assert.equal((await health()).status, 200);
    assert.equal((await health()).status, 429);
    assert.equal((await api.call('GET', '/livez')).status, 200);
    assert.equal(proxy.scripts(), 2, 'nothing more is asked of the hung Redis while the breaker is open');
  });

  test("an address's requests split across two instances are refused once their sum passes API_RATE_LIMIT_PER_ADDRESS", async (t) => {
    const [a, b] = await twoInstances(t, { API_RATE_LIMIT_PER_ADDRESS: '3' });
    for (const instance of [a, b, a]) assert.equal((await instance!.get('/livez')).status, 200);
    await assertTooMany(await b!.get('/livez'), 60);
    await assertTooMany(await a!.get('/api/v1/no-such-route'), 60);
  });

  test('a token revoked through one instance gets 401 from every instance at its next request: no instance keeps it', async (t) => {
    const [a, b] = await twoInstances(t, {});
    const alice = await newCustomer(a!.runtime);
    for (const instance of [a, b]) assert.equal((await instance!.get('/api/v1/wallet/balance', alice.token)).status, 200);
    await b!.runtime.admin.revokeToken(alice.token);
    for (const instance of [a, b]) assert.equal((await instance!.get('/api/v1/wallet/balance', alice.token)).status, 401);
  });

  test('while Redis does not answer an instance, it holds the limits alone (said once), and shares them again once Redis answers', async (t) => {
    const { logger, text } = capturedLogger('info');
    const [a, b] = await twoInstances(t, { API_RATE_LIMIT_PER_TOKEN: '3' }, logger);
    const alice = await newCustomer(a!.runtime);
    assert.equal((await b!.get('/api/v1/health', alice.token)).status, 200);

    // The client moves through its states on its own events: disconnect a ready one, connect it again once ended.
    await untilStatus(a!.redis, 'ready');
    a!.redis.disconnect();
    for (let i = 0; i < 3; i++) assert.equal((await a!.get('/api/v1/health', alice.token)).status, 200);
    await assertTooMany(await a!.get('/api/v1/health', alice.token), 60);
    const warnings = text().match(/Redis does not answer: rate limits are counted in this process until it does/g) ?? [];
    assert.equal(warnings.length, 1, 'the outage is logged once, not per request');

    await untilStatus(a!.redis, 'end');
    await a!.redis.connect();
    // In Redis: b's one request before the outage, a's two after it; b's next is the fourth.
    assert.equal((await a!.get('/api/v1/health', alice.token)).status, 200);
    assert.equal((await a!.get('/api/v1/health', alice.token)).status, 200);
    await assertTooMany(await b!.get('/api/v1/health', alice.token), 60);
    assert.match(text(), /Redis answers again: rate limits are shared again/);
  });
});
