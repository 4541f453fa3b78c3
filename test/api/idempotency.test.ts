import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { catalogue, newCard, newCustomer, type Customer } from '../helpers/core.js';
import { assertFailure, assertSuccess, startTestApi, type TestApi } from '../helpers/http.js';

// Extension: Idempotency-Key on every POST. Same key + same request → the stored reply; exactly one effect.

describe('Idempotency-Key', () => {
  let api: TestApi;
  let alice: Customer;
  let bob: Customer;
  let cardId: string;
  let n = 0;
  const key = () => `key-${++n}`;

  before(async () => {
    api = await startTestApi();
    alice = await newCustomer(api.t, 1_000_000, 'Alice');
    bob = await newCustomer(api.t, 1_000_000, 'Bob');
  });
  after(() => api.close());
  beforeEach(async () => {
    cardId = (await newCard(api.t, alice)).id;
  });

  const topup = (k: string, amount = 10, token = alice.token, id = cardId) =>
    api.call('POST', `/api/v1/cards/${id}/topup`, { token, body: { amount }, headers: { 'idempotency-key': k } });
  const topupCount = async () =>
    (await api.t.core.listTransactions(alice.caller, { card_id: cardId })).data.filter((t) => t.type === 'topup').length;
  const walletOf = async (c: Customer) => (await api.t.core.walletBalance(c.caller)).balance;

  test('a replay with the same key and body returns the stored reply and has no second effect', async () => {
    const k = key();
    const first = await topup(k);
    assertSuccess(first);
    const wallet = await walletOf(alice);
    const second = await topup(k);
    assert.equal(second.status, 200);
    assert.equal(second.text, first.text);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.equal(await walletOf(alice), wallet);
    assert.equal(await topupCount(), 1);
  });

  test('the same key with another body or another card is refused with 422', async () => {
    const k = key();
    assertSuccess(await topup(k, 10));
    assertFailure(await topup(k, 11), 422, 'Idempotency-Key was already used with a different request');
    const other = await newCard(api.t, alice);
    assertFailure(await topup(k, 10, alice.token, other.id), 422, 'Idempotency-Key was already used with a different request');
    assert.equal(await topupCount(), 1);
  });

  test('keys belong to one user: another user may use the same key', async () => {
    const k = key();
    assertSuccess(await topup(k));
    const bobCard = await newCard(api.t, bob);
    const r = await topup(k, 10, bob.token, bobCard.id);
    assertSuccess(r);
    assert.equal(r.headers.get('idempotent-replayed'), null);
  });

  test('twenty concurrent requests with one key have exactly one effect', async () => {
    const k = key();
    const wallet = await walletOf(alice);
    const replies = await Promise.all(Array.from({ length: 20 }, () => topup(k)));
    const ok = replies.filter((r) => r.status === 200);
    assert.ok(ok.length >= 1);
    for (const r of ok) assert.equal(r.text, ok[0]!.text);
    for (const r of replies.filter((r) => r.status !== 200)) {
      assertFailure(r, 409, 'A request with this Idempotency-Key is still being processed; retry shortly');
    }
    assert.equal(await topupCount(), 1);
    assert.equal(wallet - (await walletOf(alice)), 1055);
    assert.equal((await topup(k)).text, ok[0]!.text);
  });

  test('concurrent card creations with one key create one card', async () => {
    const k = key();
    const { bin, plan } = await catalogue(api.t);
    const before = (await api.t.core.listCards(bob.caller)).length;
    const replies = await Promise.all(
      Array.from({ length: 10 }, () =>
        api.call('POST', '/api/v1/cards', { token: bob.token, body: { bin_id: bin.id, name: 'Once', planId: plan.id }, headers: { 'idempotency-key': k } }),
      ),
    );
    assert.ok(replies.every((r) => r.status === 201 || r.status === 409));
    assert.equal((await api.t.core.listCards(bob.caller)).length, before + 1);
    const replay = await api.call('POST', '/api/v1/cards', { token: bob.token, body: { bin_id: bin.id, name: 'Once', planId: plan.id }, headers: { 'idempotency-key': k } });
    assert.equal(replay.status, 201);
    assert.equal(replay.body.data.id, replies.find((r) => r.status === 201)!.body.data.id);
  });

  test('a refusal by a money rule is stored; a cooldown (429) is not, so the key can be retried later', async () => {
    const k1 = key();
    assert.equal((await topup(k1, 2000)).status, 422);
    api.t.clock.advance(120_000);
    assert.equal((await topup(k1, 2000)).status, 422);

    assertSuccess(await topup(key()));
    const k2 = key();
    assert.equal((await topup(k2)).status, 429);
    api.t.clock.advance(120_000);
    const retried = await topup(k2);
    assertSuccess(retried);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
  });

  test('replies are kept for 24 hours, then the key is free again', async () => {
    const k = key();
    const first = await topup(k);
    api.t.clock.advance(23 * 3600_000);
    assert.equal((await topup(k)).text, first.text);
    api.t.clock.advance(2 * 3600_000);
    const fresh = await topup(k);
    assertSuccess(fresh);
    assert.notEqual(fresh.body.data.transaction_id, first.body.data.transaction_id);
    assert.equal(await topupCount(), 2);
  });

  test('a claim left pending by a request that never finished stays refused until it expires: it may have taken effect', async () => {
    const k = key();
    const first = await topup(k);
    await api.t.database.db
      .withTables<{ idempotency_keys: { user_id: string; idempotency_key: string; status_code: number | null; response_body: string | null } }>()
      .updateTable('idempotency_keys')
      .set({ status_code: null, response_body: null })
      .where('user_id', '=', alice.userId)
      .where('idempotency_key', '=', k)
      .execute();
    api.t.clock.advance(3600_000);
    assertFailure(await topup(k), 409, 'A request with this Idempotency-Key is still being processed; retry shortly');
    assert.equal(await topupCount(), 1);
    api.t.clock.advance(24 * 3600_000);
    const fresh = await topup(k);
    assertSuccess(fresh);
    assert.notEqual(fresh.body.data.transaction_id, first.body.data.transaction_id);
  });

  test('an invalid request does not claim the key; a malformed key is a validation error', async () => {
    const k = key();
    assert.equal((await topup(k, 1)).status, 400);
    assertSuccess(await topup(k, 10));
    const bad = await api.call('POST', `/api/v1/cards/${cardId}/withdraw`, { token: alice.token, body: { amount: 1 }, headers: { 'idempotency-key': 'x'.repeat(300) } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error[0].path[0], 'Idempotency-Key');
  });

  test('POST without a body (OTP request) is idempotent too, its errors still in `error`', async () => {
    const k = key();
    await api.t.admin.simulateOtpEmail(cardId);
    const headers = { 'idempotency-key': k };
    const first = await api.call('POST', `/api/v1/cards/${cardId}/otps/request`, { token: alice.token, headers });
    assertSuccess(first);
    const again = await api.call('POST', `/api/v1/cards/${cardId}/otps/request`, { token: alice.token, headers });
    assert.equal(again.text, first.text);
    const otherCard = await newCard(api.t, alice);
    const mismatch = await api.call('POST', `/api/v1/cards/${otherCard.id}/otps/request`, { token: alice.token, headers });
    assertFailure(mismatch, 422, 'Idempotency-Key was already used with a different request', 'error');
  });
});
