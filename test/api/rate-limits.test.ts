import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { describe, test } from 'node:test';
import { createHttpServer } from '../../src/api/server.js';
import { startHttpApi } from '../../src/api/start.js';
import { loadConfig } from '../../src/app/config.js';
import { createLogger } from '../../src/infra/logger.js';
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

  test("the bot's webhook is counted per address apart from the API: past WEBHOOK_RATE_LIMIT_PER_ADDRESS posts get 429", async (t) => {
    const core = await createTestCore();
    t.after(() => core.close());
    const app = createHttpServer({
      core: core.core,
      db: core.database.db,
      logger: createLogger('silent'),
      clock: core.clock,
      limits: { ...roomy, perAddressPerMinute: 1, webhookPerAddressPerMinute: 3 },
    });
    t.after(() => app.close());
    let handled = 0;
    void app.register(async (other) => {
      other.post('/hook', { config: { public: true, webhook: true } }, async () => {
        handled++;
        return '';
      });
    });
    const post = (remoteAddress: string) => app.inject({ method: 'POST', url: '/hook', payload: {}, remoteAddress });
    // Three from one address, past the API's one a minute: the webhook has a count of its own.
    for (let i = 0; i < 3; i++) assert.equal((await post('203.0.113.5')).statusCode, 200);
    const refused = await post('203.0.113.5');
    assert.equal(refused.statusCode, 429);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal((await post('198.51.100.6')).statusCode, 200, 'another address goes on');
    assert.equal(handled, 4);
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

  test('behind one proxy (HTTP_TRUST_PROXY=1) the client is the address that proxy added; what the client wrote before it is ignored', async (t) => {
    const behindProxy = await startTestApi({ server: { limits: { ...roomy, perAddressPerMinute: 2 }, trustProxy: 1 } });
    t.after(() => behindProxy.close());
    // The proxy appends the address it saw; anything before it the client may have forged.
    const via = (forged: string, seen: string) => ({ headers: { 'x-forwarded-for': `${forged}, ${seen}` } });
    for (const forged of ['192.0.2.1', '192.0.2.2'])
      assert.equal((await behindProxy.call('GET', '/livez', via(forged, '203.0.113.7'))).status, 200);
    assert.equal(
      (await behindProxy.call('GET', '/livez', via('192.0.2.3', '203.0.113.7'))).status,
      429,
      'a forged address escapes nothing',
    );
    assert.equal(
      (await behindProxy.call('GET', '/livez', via('192.0.2.3', '198.51.100.9'))).status,
      200,
      'another client behind the proxy goes on',
    );
  });

  test('per address: past API_RATE_LIMIT_PER_ADDRESS requests a minute the address gets 429 on public and unknown routes and for missing and invalid tokens', async (t) => {
    const api = await limitedApi(t, { perAddressPerMinute: 4 });
    const alice = await newCustomer(api.t);
    assertSuccess(await api.call('GET', '/livez'));
    assert.equal((await api.call('GET', '/api/v1/openapi.json')).status, 200);
    assertFailure(await api.call('GET', '/api/v1/health', { token: 'guess-1' }), 401, 'Invalid or missing API token');
    assertFailure(await api.call('GET', '/api/v1/health'), 401, 'Invalid or missing API token');
    assertTooMany(await api.call('GET', '/livez'), 60);
    assertTooMany(await api.call('GET', '/api/v1/openapi.json'), 60);
    assertTooMany(await api.call('GET', '/api/v1/no-such-route'), 60);
    assertTooMany(await api.call('GET', '/api/v1/health', { token: 'guess-2' }), 60);
    assertTooMany(await api.call('GET', '/api/v1/wallet/balance'), 60);
    // A valid token is limited per token only: what others at its address spent does not refuse it.
    assertSuccess(await api.call('GET', '/api/v1/health', { token: alice.token }));
  });

  test("others at a token's address cannot spend its requests: a valid token is limited per token only, and not counted against the address", async (t) => {
    const api = await limitedApi(t, { perAddressPerMinute: 5, perTokenPerMinute: 8 });
    const alice = await newCustomer(api.t);
    const bob = await newCustomer(api.t, 100_000, 'Bob');
    // Alice's requests, past the address limit: each counted against her token alone.
    for (let i = 0; i < 8; i++) assertSuccess(await api.call('GET', '/api/v1/wallet/balance', { token: alice.token }));
    assertTooMany(await api.call('GET', '/api/v1/wallet/balance', { token: alice.token }), 60);
    // ...so the address still has its whole budget for the others there.
    for (let i = 0; i < 5; i++) assertSuccess(await api.call('GET', '/livez'));
    assertTooMany(await api.call('GET', '/livez'), 60);
    // Someone there used it up: Bob, with a valid token, goes on; a junk token does not.
    for (let i = 0; i < 3; i++) assertSuccess(await api.call('GET', '/api/v1/health', { token: bob.token }));
    assertTooMany(await api.call('GET', '/api/v1/health', { token: 'junk' }), 60);
  });

  test('public routes are limited per address but not per token', async (t) => {
    const api = await limitedApi(t, { perTokenPerMinute: 2 });
    const alice = await newCustomer(api.t);
    for (let i = 0; i < 5; i++) assertSuccess(await api.call('GET', '/livez', { token: alice.token }));
    assertSuccess(await api.call('GET', '/api/v1/health', { token: alice.token }));
  });

  test("past API_AUTH_FAILURES_PER_ADDRESS failed authentications the address's missing and invalid tokens get 429, said once; a valid token from it goes on", async (t) => {
    const logLines: string[] = [];
    const api = await startTestApi({ logLines, server: { limits: { ...roomy, authFailuresPerAddress: 3 } } });
    t.after(() => api.close());
    const alice = await newCustomer(api.t);
    assertSuccess(await api.call('GET', '/api/v1/health', { token: alice.token }));
    for (const token of ['guess-1', 'guess-2', undefined]) {
      assertFailure(await api.call('GET', '/api/v1/wallet/balance', { token }), 401, 'Invalid or missing API token');
    }
    // The window is 15 minutes.
    for (const token of ['guess-4', undefined, 'guess-5']) assertTooMany(await api.call('GET', '/api/v1/wallet/balance', { token }), 900);
    const refused = await api.call('GET', '/api/v1/wallet/balance', { token: 'guess-6' });
    assert.ok(Number(refused.headers.get('retry-after')) > 60);
    // Everyone else behind that address (one NAT, one proxy) goes on.
    assertSuccess(await api.call('GET', '/api/v1/wallet/balance', { token: alice.token }));
    assertSuccess(await api.call('GET', '/livez'));

    const said = logLines.filter((line) => line.includes('used up its failed authentications'));
    assert.equal(said.length, 1, 'said once per window, not per refusal');
    assert.equal(JSON.parse(said[0]!).address, '127.0.0.1');
    assert.ok(!logLines.some((line) => line.includes('guess-')), 'no token reaches the log');
  });

  test('a flood of bad tokens is refused past the address limit and the failed authentications, one token lookup each', async (t) => {
    const api = await limitedApi(t, { authFailuresPerAddress: 2, perAddressPerMinute: 5 });
    // A token is looked up first, or by the wallet read itself (`tokenCheckedByOperation`): both count.
    let lookups = 0;
    const lookUp = api.t.core.authenticateByTokenHash;
    api.t.core.authenticateByTokenHash = (tokenHash) => {
      lookups++;
      return lookUp(tokenHash);
    };
    const readWallet = api.t.core.walletBalance;
    api.t.core.walletBalance = (who) => {
      lookups++;
      return readWallet(who);
    };
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await api.call('GET', '/api/v1/wallet/balance', { token: `guess-${i}` })).status);
    assert.deepEqual(statuses, [401, 401, 429, 429, 429, 429, 429, 429]);
    // A token is looked up before its address may refuse it (a valid one never is): the index lookup is each one's cost.
    assert.equal(lookups, 8);
  });

  test('startHttpApi takes the limits and the request timeout from the settings', async (t) => {
    const runtime = await createTestCore();
    t.after(() => runtime.close());
    const config = loadConfig({ HTTP_PORT: '0', API_RATE_LIMIT_PER_TOKEN: '2', HTTP_REQUEST_TIMEOUT_MS: '1000' });
    const api = await startHttpApi({ runtime, config, logger: createLogger('silent') });
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
