import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { startHttpApi } from '../../src/api/start.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import type { RateLimits } from '../../src/api/rate-limits.js';
import { createTestCore, newCard, newCustomer } from '../helpers/core.js';
import { assertFailure, assertSuccess, startTestApi, type ApiResponse } from '../helpers/http.js';

// The API's limits: requests per token and per address, failed authentications per address, a request timeout.

const TOO_MANY = /^Too many requests; retry in (\d+) seconds?$/;
const roomy: RateLimits = { perTokenPerMinute: 1000, perAddressPerMinute: 1000, authFailuresPerAddress: 1000 };

async function limitedApi(t: { after(fn: () => Promise<void>): void }, limits: Partial<RateLimits>) {
  const api = await startTestApi({ server: { limits: { ...roomy, ...limits } } });
  t.after(() => api.close());
  return api;
}

/** A 429 in the envelope (text in `field`), with `Retry-After` in seconds, at most `window` and matching the text. */
function assertTooMany(r: ApiResponse, windowSeconds: number, field: 'message' | 'error' = 'message'): void {
  assert.equal(r.status, 429, r.text);
  assert.equal(r.body.success, false);
  const match = TOO_MANY.exec(r.body[field]);
  assert.ok(match, r.text);
  const retryAfter = Number(r.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= windowSeconds, `Retry-After ${retryAfter}`);
  assert.equal(Number(match[1]), retryAfter);
}

describe('the API has limits', () => {
  test('per token: past API_RATE_LIMIT_PER_TOKEN requests a minute the token gets 429 with Retry-After; other tokens go on', async (t) => {
    const api = await limitedApi(t, { perTokenPerMinute: 5 });
    const alice = await newCustomer(api.t, 100_000, 'Alice');
    const bob = await newCustomer(api.t, 100_000, 'Bob');
    const card = await newCard(api.t, bob);
    for (let i = 0; i < 5; i++) assertSuccess(await api.call('GET', '/api/v1/health', { token: alice.token }));
    assertTooMany(await api.call('GET', '/api/v1/wallet/balance', { token: alice.token }), 60);
    assertTooMany(await api.call('POST', `/api/v1/cards/${card.id}/topup`, { token: alice.token, body: { amount: 10 } }), 60);

    for (let i = 0; i < 4; i++) assertSuccess(await api.call('GET', '/api/v1/bins', { token: bob.token }));
    assertSuccess(await api.call('POST', `/api/v1/cards/${card.id}/topup`, { token: bob.token, body: { amount: 10 } }));
    // The OTP endpoints carry their error text in `error`, this one too.
    assertTooMany(await api.call('GET', `/api/v1/cards/${card.id}/otps`, { token: bob.token }), 60, 'error');
    assert.equal((await api.t.core.listTransactions(bob.caller, { card_id: card.id })).data.filter((x) => x.type === 'topup').length, 1);
  });

  test('behind a trusted proxy (HTTP_TRUST_PROXY) the client address is taken from X-Forwarded-For; otherwise the header is ignored', async (t) => {
    const behindProxy = await startTestApi({ server: { limits: { ...roomy, perAddressPerMinute: 2 }, trustProxy: ['127.0.0.1'] } });
    t.after(() => behindProxy.close());
    const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });
    for (let i = 0; i < 2; i++) assert.equal((await behindProxy.call('GET', '/livez', from('203.0.113.7'))).status, 200);
    assert.equal((await behindProxy.call('GET', '/livez', from('203.0.113.7'))).status, 429);
    assert.equal((await behindProxy.call('GET', '/livez', from('198.51.100.9'))).status, 200, 'another client behind the proxy goes on');

    const direct = await limitedApi(t, { perAddressPerMinute: 2 });
    for (let i = 0; i < 2; i++) assert.equal((await direct.call('GET', '/livez', from(`192.0.2.${i}`))).status, 200);
    assert.equal(
      (await direct.call('GET', '/livez', from('192.0.2.99'))).status,
      429,
      'a forged header changes nothing without a trusted proxy',
    );
  });

  test('per address: past API_RATE_LIMIT_PER_ADDRESS requests a minute the address gets 429 everywhere, public and unknown routes too', async (t) => {
    const api = await limitedApi(t, { perAddressPerMinute: 4 });
    const alice = await newCustomer(api.t);
    const bob = await newCustomer(api.t, 100_000, 'Bob');
    assertSuccess(await api.call('GET', '/api/v1/health', { token: alice.token }));
    assertSuccess(await api.call('GET', '/api/v1/health', { token: bob.token }));
    assertSuccess(await api.call('GET', '/livez'));
    assert.equal((await api.call('GET', '/api/v1/openapi.json')).status, 200);
    assertTooMany(await api.call('GET', '/api/v1/health', { token: bob.token }), 60);
    assertTooMany(await api.call('GET', '/livez'), 60);
    assertTooMany(await api.call('GET', '/api/v1/openapi.json'), 60);
    assertTooMany(await api.call('GET', '/api/v1/no-such-route'), 60);
  });

  test('public routes are limited per address but not per token', async (t) => {
    const api = await limitedApi(t, { perTokenPerMinute: 2 });
    const alice = await newCustomer(api.t);
    for (let i = 0; i < 5; i++) assertSuccess(await api.call('GET', '/livez', { token: alice.token }));
    assertSuccess(await api.call('GET', '/api/v1/health', { token: alice.token }));
  });

  test('past API_AUTH_FAILURES_PER_ADDRESS failed authentications the address gets 429 before any token is checked, a valid one too', async (t) => {
    const api = await limitedApi(t, { authFailuresPerAddress: 3 });
    const alice = await newCustomer(api.t);
    assertSuccess(await api.call('GET', '/api/v1/health', { token: alice.token }));
    for (const token of ['guess-1', 'guess-2', undefined]) {
      assertFailure(await api.call('GET', '/api/v1/wallet/balance', { token }), 401, 'Invalid or missing API token');
    }
    // The window is 15 minutes.
    assertTooMany(await api.call('GET', '/api/v1/wallet/balance', { token: 'guess-4' }), 900);
    const valid = await api.call('GET', '/api/v1/wallet/balance', { token: alice.token });
    assertTooMany(valid, 900);
    assert.ok(Number(valid.headers.get('retry-after')) > 60);
    // Liveness checks read no token and go on.
    assertSuccess(await api.call('GET', '/livez'));
  });

  test('startHttpApi takes the limits and the request timeout from the settings', async (t) => {
    const runtime = await createTestCore();
    t.after(() => runtime.close());
    const config = loadConfig({ HTTP_PORT: '0', API_RATE_LIMIT_PER_TOKEN: '2', HTTP_REQUEST_TIMEOUT_MS: '1000' });
    const api = await startHttpApi(runtime, config, createLogger('silent'));
    t.after(() => api.close());
    assert.equal(api.app.server.requestTimeout, 1000);
    assert.equal(api.app.server.timeout, 1000);

    const { token } = await newCustomer(runtime);
    const health = () => fetch(`${api.url}/api/v1/health`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal((await health()).status, 200);
    assert.equal((await health()).status, 200);
    const refused = await health();
    assert.equal(refused.status, 429);
    assert.match(((await refused.json()) as { message: string }).message, TOO_MANY);

    // A connection that sends nothing is closed once the timeout has passed.
    const closedAfter = await new Promise<number>((resolve, reject) => {
      const started = Date.now();
      const socket = connect(Number(new URL(api.url).port), '127.0.0.1');
      socket.on('close', () => resolve(Date.now() - started));
      socket.on('error', reject);
    });
    assert.ok(closedAfter >= 900 && closedAfter < 5000, `closed after ${closedAfter} ms`);
  });
});
