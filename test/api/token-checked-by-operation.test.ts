import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import type { RateLimits } from '../../src/api/rate-limits.js';
import { newCard, newCustomer } from '../helpers/core.js';
import { assertFailure, assertSuccess, startTestApi, type TestApiOptions } from '../helpers/http.js';
import { coreOn, type Dialect, dialects } from '../core/dialects.js';

// The HTTP top-up and the wallet read leave their token to the operation (`tokenCheckedByOperation`): the
// top-up's own statement checks it on Postgres, one round trip instead of two, and the wallet read reads
// the token and the wallet in one statement on both databases. Every answer a client sees must stay as on
// the other routes: a bad token refused first and changing nothing, failures counted, limits kept.

const INVALID_TOKEN = 'Invalid or missing API token';
const roomy: RateLimits = { perTokenPerMinute: 1000, perAddressPerMinute: 1000, authFailuresPerAddress: 1000 };

async function served(ctx: TestContext, dialect: Dialect, options: Omit<TestApiOptions, 'core'> = {}) {
  const api = await startTestApi({ ...options, core: await coreOn(dialect, { settings: { topupCooldownSeconds: 1 } }) });
  ctx.after(() => api.close());
  const alice = await newCustomer(api.t, 100_000);
  const card = await newCard(api.t, alice);
  const topup = (token: string | undefined, body: unknown = { amount: 10 }, headers?: Record<string, string>) =>
    api.call('POST', `/api/v1/cards/${card.id}/topup`, { token, body, headers });
  return { api, alice, card, topup };
}

for (const dialect of dialects()) {
  describe(`the HTTP top-up checks its token in the operation (${dialect})`, () => {
    test('a revoked or unknown token is refused 401 and nothing moves, not even the attempt', async (ctx) => {
      const { api, alice, card, topup } = await served(ctx, dialect);
      assertSuccess(await topup(alice.token));
      api.t.clock.advance(2_000);
      await api.t.admin.revokeToken(alice.token);
      const before = await api.t.core.getCard(alice.caller, card.id);
      const wallet = await api.t.core.walletBalance(alice.caller);
      for (const token of [alice.token, 'vc_unknown', undefined]) {
        const refused = await topup(token);
        assertFailure(refused, 401, INVALID_TOKEN);
        assert.equal(refused.headers.get('www-authenticate'), 'Bearer');
      }
      assert.deepEqual(await api.t.core.getCard(alice.caller, card.id), before);
      assert.deepEqual(await api.t.core.walletBalance(alice.caller), wallet);
      // No attempt was counted: the card is off its cooldown for the next top-up at the same moment.
      await api.t.core.topup(alice.caller, card.id, { amount: 1_000 });
    });

    test('a bad token is told before a bad body; a good token with a bad body gets the validation error', async (ctx) => {
      const { alice, topup } = await served(ctx, dialect);
      for (const body of [{ amount: -5 }, { amount: 'ten' }, '{"amount": ', {}]) {
        assertFailure(await topup('vc_unknown', body), 401, INVALID_TOKEN);
        assertFailure(await topup(undefined, body), 401, INVALID_TOKEN);
        assert.equal((await topup(alice.token, body)).status, 400);
      }
    });

    test("a good token's refusals keep their order and their caller: an unknown card 404, its cooldown 429, logged with the user", async (ctx) => {
      const logLines: string[] = [];
      const { api, alice, topup } = await served(ctx, dialect, { logLines });
      const missing = await api.call('POST', '/api/v1/cards/00000000-0000-4000-8000-000000000000/topup', {
        token: alice.token,
        body: { amount: 10 },
      });
      assert.equal(missing.status, 404);
      assertSuccess(await topup(alice.token));
      assert.equal((await topup(alice.token)).status, 429, 'the cooldown');
      const access = logLines.map((line) => JSON.parse(line)).filter((line) => line.route === '/api/v1/cards/:id/topup');
      assert.deepEqual(
        access.map((line) => [line.status, line.userId]),
        [
          [404, alice.userId],
          [200, alice.userId],
          [429, alice.userId],
        ],
      );
      assert.ok(!logLines.some((line) => line.includes(alice.token)), 'no token reaches the log');
    });

    test("bad tokens on the top-up count as failed authentications; a token over its own limit gets 429; the token's use is written", async (ctx) => {
      const { api, alice, topup } = await served(ctx, dialect, {
        server: { limits: { ...roomy, authFailuresPerAddress: 2, perTokenPerMinute: 2 } },
      });
      assert.deepEqual(
        [(await topup('vc_guess-1')).status, (await topup('vc_guess-2')).status, (await topup('vc_guess-3', { amount: -1 })).status],
        [401, 401, 429],
      );
      const used = async () =>
        (
          await api.t.database.db
            .selectFrom('api_tokens')
            .select('last_used_at')
            .where('user_id', '=', alice.userId)
            .executeTakeFirstOrThrow()
        ).last_used_at;
      api.t.clock.advance(120_000); // past the last use written when the customer was made
      assertSuccess(await topup(alice.token), 200);
      assert.equal(await used(), api.t.clock.now().toISOString());
      api.t.clock.advance(2_000);
      assertSuccess(await topup(alice.token), 200);
      const third = await topup(alice.token);
      assert.equal(third.status, 429);
      assert.match(third.body.message, /too many requests/i);
    });

    test('with an Idempotency-Key the token is looked up first, as the key is claimed per user', async (ctx) => {
      const { alice, topup } = await served(ctx, dialect);
      const key = { 'idempotency-key': 'topup-once-1' };
      const first = assertSuccess(await topup(alice.token, { amount: 10 }, key));
      const again = await topup(alice.token, { amount: 10 }, key);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(assertSuccess(again).data, first.data);
      assertFailure(await topup('vc_unknown', { amount: 10 }, key), 401, INVALID_TOKEN);
    });
  });

  describe(`the HTTP wallet read checks its token in the operation (${dialect})`, () => {
    test('a revoked, unknown or missing token is refused 401; a good one reads the wallet, logged with its user', async (ctx) => {
      const logLines: string[] = [];
      const { api, alice } = await served(ctx, dialect, { logLines });
      const wallet = (token: string | undefined) => api.call('GET', '/api/v1/wallet/balance', { token });
      // The token is read with the wallet: no lookup of its own before the route (one statement, not two).
      const lookUp = api.t.core.authenticateByTokenHash;
      let lookups = 0;
      api.t.core.authenticateByTokenHash = (tokenHash) => {
        lookups++;
        return lookUp(tokenHash);
      };
      const answer = await wallet(alice.token);
      assert.equal(lookups, 0, 'the token was looked up before the operation');
      const read = assertSuccess(answer);
      const expected = await api.t.core.walletBalance(alice.caller);
      assert.deepEqual(read, { balance: expected.balance / 100, updated_at: expected.updatedAt });
      assert.equal(answer.body.message, 'Wallet balance retrieved successfully');
      const bob = await newCustomer(api.t, 2_500);
      assert.equal(assertSuccess(await wallet(bob.token)).balance, 25, "each token reads its own user's wallet");
      await api.t.admin.revokeToken(alice.token);
      for (const token of [alice.token, 'vc_unknown', undefined]) {
        const refused = await wallet(token);
        assertFailure(refused, 401, INVALID_TOKEN);
        assert.equal(refused.headers.get('www-authenticate'), 'Bearer');
      }
      const access = logLines.map((line) => JSON.parse(line)).filter((line) => line.route === '/api/v1/wallet/balance');
      assert.deepEqual(
        access.map((line) => [line.status, line.userId]),
        [
          [200, alice.userId],
          [200, bob.userId],
          [401, undefined],
          [401, undefined],
          [401, undefined],
        ],
      );
    });

    test('a bad token is told before a bad query; a good token with a bad query gets the validation error', async (ctx) => {
      const { api, alice } = await served(ctx, dialect);
      const wallet = (token: string | undefined) => api.call('GET', '/api/v1/wallet/balance?page=2', { token });
      assertFailure(await wallet('vc_unknown'), 401, INVALID_TOKEN);
      assertFailure(await wallet(undefined), 401, INVALID_TOKEN);
      assert.equal((await wallet(alice.token)).status, 400);
    });

    test("bad tokens on the wallet read count as failed authentications; a token over its own limit gets 429; the token's use is written", async (ctx) => {
      const { api, alice } = await served(ctx, dialect, {
        server: { limits: { ...roomy, authFailuresPerAddress: 2, perTokenPerMinute: 2 } },
      });
      const wallet = (token: string | undefined) => api.call('GET', '/api/v1/wallet/balance', { token });
      assert.deepEqual(
        [(await wallet('vc_guess-1')).status, (await wallet('vc_guess-2')).status, (await wallet('vc_guess-3')).status],
        [401, 401, 429],
      );
      api.t.clock.advance(120_000); // past the last use written when the customer was made
      assertSuccess(await wallet(alice.token));
      const used = await api.t.database.db
        .selectFrom('api_tokens')
        .select('last_used_at')
        .where('user_id', '=', alice.userId)
        .executeTakeFirstOrThrow();
      assert.equal(used.last_used_at, api.t.clock.now().toISOString());
      assertSuccess(await wallet(alice.token));
      const third = await wallet(alice.token);
      assert.equal(third.status, 429);
      assert.match(third.body.message, /too many requests/i);
    });
  });
}
