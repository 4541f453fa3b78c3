import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { CHALLENGE_VALIDITY_MS, openChallenge } from '../../src/core/operations/challenges.js';
import { newCard, newCustomer } from '../helpers/core.js';
import { assertFailure, assertSuccess, startTestApi } from '../helpers/http.js';
import { coreOn, dialects } from '../core/dialects.js';

// Issue 33, section 5, read over HTTP: `GET /api/v1/cards/{id}/challenges` lists a card's recent purchase
// approvals and their outcomes (every exchange checked against the OpenAPI document when the API closes).

async function served(ctx: TestContext, dialect: 'sqlite' | 'postgres') {
  const api = await startTestApi({ core: await coreOn(dialect) });
  ctx.after(() => api.close());
  const alice = await newCustomer(api.t, 100_000, 'Alice');
  const bob = await newCustomer(api.t, 100_000, 'Bob');
  const card = await newCard(api.t, alice);
  const row = await api.t.database.db.selectFrom('cards').selectAll().where('id', '=', card.id).executeTakeFirstOrThrow();
  const open = (amount: number, merchant: string) =>
    openChallenge({ db: api.t.database.db, clock: api.t.clock }, row, { amount, merchant });
  return { api, alice, bob, cardId: card.id, open };
}

for (const dialect of dialects()) {
  describe(`GET /api/v1/cards/{id}/challenges (${dialect})`, () => {
    test('lists the recent challenges newest first with their outcomes: approved, declined, pending, and expired once past its time', async (ctx) => {
      const { api, alice, cardId, open } = await served(ctx, dialect);
      const expired = await open(4_210, 'STEAM');
      api.t.clock.advance(CHALLENGE_VALIDITY_MS);
      const approved = await open(999, 'SHOP');
      await api.t.core.answerChallenge(alice.caller, approved.id, 'approve');
      api.t.clock.advance(1_000);
      const declined = await open(150, 'CAFE');
      await api.t.core.answerChallenge(alice.caller, declined.id, 'decline');
      api.t.clock.advance(1_000);
      const pending = await open(2_500, 'BOOKS');

      const listed = assertSuccess(await api.call('GET', `/api/v1/cards/${cardId}/challenges`, { token: alice.token }));
      assert.deepEqual(
        listed.map((c: Record<string, unknown>) => [c.id, c.status, c.amount, c.merchant_name]),
        [
          [pending.id, 'pending', 25, 'BOOKS'],
          [declined.id, 'declined', 1.5, 'CAFE'],
          [approved.id, 'approved', 9.99, 'SHOP'],
          [expired.id, 'expired', 42.1, 'STEAM'],
        ],
      );
      const first = listed[0];
      assert.deepEqual(
        { card: first.card_id, currency: first.currency, answeredAt: first.answered_at, expiresAt: first.expires_at },
        { card: cardId, currency: 'USD', answeredAt: null, expiresAt: pending.expiresAt },
      );
      assert.equal(typeof listed[1].answered_at, 'string');
    });

    test("another user's card reads as not found, like the other card routes; no token is refused", async (ctx) => {
      const { api, bob, cardId, open } = await served(ctx, dialect);
      await open(100, 'SHOP');
      assertFailure(
        await api.call('GET', `/api/v1/cards/${cardId}/challenges`, { token: bob.token }),
        404,
        'Card not found or access denied',
      );
      assertFailure(
        await api.call('GET', '/api/v1/cards/not-a-card/challenges', { token: bob.token }),
        404,
        'Card not found or access denied',
      );
      assertFailure(await api.call('GET', `/api/v1/cards/${cardId}/challenges`), 401, 'Invalid or missing API token');
      const own = await newCard(api.t, bob, 'Empty');
      assert.deepEqual(assertSuccess(await api.call('GET', `/api/v1/cards/${own.id}/challenges`, { token: bob.token })), []);
    });
  });
}
