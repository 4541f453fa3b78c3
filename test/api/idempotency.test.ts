import assert from 'node:assert/strict';
import type { IdempotencyKeysTable } from '../../src/api/idempotency-store.js';
import { after, before, beforeEach, describe, test } from 'node:test';
import { coreOn, dialects } from '../core/dialects.js';
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
        api.call('POST', '/api/v1/cards', {
          token: bob.token,
          body: { bin_id: bin.id, name: 'Once', planId: plan.id },
          headers: { 'idempotency-key': k },
        }),
      ),
    );
    assert.ok(replies.every((r) => r.status === 201 || r.status === 409));
    assert.equal((await api.t.core.listCards(bob.caller)).length, before + 1);
    const replay = await api.call('POST', '/api/v1/cards', {
      token: bob.token,
      body: { bin_id: bin.id, name: 'Once', planId: plan.id },
      headers: { 'idempotency-key': k },
    });
    assert.equal(replay.status, 201);
    assert.equal(replay.body.data.id, replies.find((r) => r.status === 201)!.body.data.id);
  });

  test('refusals are not stored: after a 422 (money rule) or a 429 (cooldown) the key is free for a retry', async () => {
    const k1 = key();
    assert.equal((await topup(k1, 2000)).status, 422);
    api.t.clock.advance(120_000);
    const again = await topup(k1, 2000);
    assert.equal(again.status, 422);
    assert.equal(again.headers.get('idempotent-replayed'), null);
    api.t.clock.advance(120_000);
    assertSuccess(await topup(k1, 10), 200);

    api.t.clock.advance(120_000);
    assertSuccess(await topup(key()));
    const k2 = key();
    assert.equal((await topup(k2)).status, 429);
    api.t.clock.advance(120_000);
    const retried = await topup(k2);
    assertSuccess(retried);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
  });

  test('the top-up quote is a read: its replies are not stored, and its key claims nothing', async () => {
    const k = key();
    const quote = (amount: number) =>
      api.call('POST', `/api/v1/cards/${cardId}/topup/quote`, { token: alice.token, body: { amount }, headers: { 'idempotency-key': k } });
    assert.equal(assertSuccess(await quote(10)).amount, 10);
    const other = await quote(20);
    assert.equal(assertSuccess(other).amount, 20);
    assert.equal(other.headers.get('idempotent-replayed'), null);
    assertSuccess(await topup(k));
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

  test('a claim left pending from before claims had leases stays refused until it expires: it may have taken effect', async () => {
    const k = key();
    const first = await topup(k);
    await api.t.database.db
      .withTables<{
        idempotency_keys: { user_id: string; idempotency_key: string; status_code: number | null; response_body: string | null };
      }>()
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
    const bad = await api.call('POST', `/api/v1/cards/${cardId}/withdraw`, {
      token: alice.token,
      body: { amount: 1 },
      headers: { 'idempotency-key': 'x'.repeat(300) },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error[0].path[0], 'Idempotency-Key');
  });

  test('a key is 1 to 255 visible ASCII characters; anything else is refused with the same item, before any effect', async () => {
    const item = {
      code: 'invalid_format',
      message: 'Idempotency-Key must be 1 to 255 visible ASCII characters',
      path: ['Idempotency-Key'],
    };
    for (const k of ['', 'k'.repeat(256), 'two words', 'tab\tbed', 'clé']) {
      const r = await topup(k);
      assert.equal(r.status, 400, JSON.stringify(k));
      assert.deepEqual(r.body.error, [item], JSON.stringify(k));
    }
    assert.equal(await topupCount(), 0);
    // One card each: a top-up starts the card's cooldown.
    for (const k of ['!', '~', 'k'.repeat(255), `${key()}:"{\\}"`])
      assertSuccess(await topup(k, 10, alice.token, (await newCard(api.t, alice)).id));
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

/** The lease of a pending claim with the default request timeout (30 s) and margin (30 s). */
const LEASE_MS = 60_000;
const IN_PROGRESS = 'A request with this Idempotency-Key is still being processed; retry shortly';

for (const dialect of dialects()) {
  describe(`Idempotency-Key across a crash, and its bound per user (${dialect})`, () => {
    let api: TestApi;
    let alice: Customer;
    let cardId: string;
    let n = 0;
    const key = () => `crash-${++n}`;

    before(async () => {
      const core = await coreOn(dialect, { settings: { topupCooldownSeconds: 0 } });
      api = await startTestApi({ core, server: { idempotency: { maxKeysPerUser: 3 } } });
      alice = await newCustomer(api.t, 1_000_000, 'Alice');
      cardId = (await newCard(api.t, alice)).id;
    });
    after(() => api.close());

    const keys = () => api.t.database.db.withTables<{ idempotency_keys: IdempotencyKeysTable }>();
    const topup = (k: string, amount = 10, who = alice, id = cardId) =>
      api.call('POST', `/api/v1/cards/${id}/topup`, { token: who.token, body: { amount }, headers: { 'idempotency-key': k } });
    const topups = async () =>
      (await api.t.core.listTransactions(alice.caller, { card_id: cardId, limit: 100 })).data.filter((t) => t.type === 'topup');
    const walletOf = async (c: Customer) => (await api.t.core.walletBalance(c.caller)).balance;

    test('a retry after a crash that undid its request runs it once, after the lease; the ledger is exact', async () => {
      // A request identical to a completed one, whose process died after claiming its key: the claim
      // row was written, the operation never committed.
      assertSuccess(await topup(key(), 10));
      const done = await keys()
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('user_id', '=', alice.userId)
        .orderBy('created_at', 'desc')
        .executeTakeFirstOrThrow();
      const k = key();
      const now = api.t.clock.now();
      await keys()
        .insertInto('idempotency_keys')
        .values({
          ...done,
          idempotency_key: k,
          status_code: null,
          response_body: null,
          created_at: now.toISOString(),
          expires_at: new Date(now.getTime() + 86_400_000).toISOString(),
          claim_token: 'the-process-that-died',
          lease_until: new Date(now.getTime() + LEASE_MS).toISOString(),
        })
        .execute();
      const wallet = await walletOf(alice);
      const count = (await topups()).length;

      assertFailure(await topup(k, 10), 409, IN_PROGRESS);
      api.t.clock.advance(LEASE_MS);
      const retried = await topup(k, 10);
      assertSuccess(retried);
      assert.equal(retried.headers.get('idempotent-replayed'), null);
      const replay = await topup(k, 10);
      assert.equal(replay.text, retried.text);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');

      assert.equal((await topups()).length, count + 1);
      assert.equal(wallet - (await walletOf(alice)), 1055);
      assert.deepEqual((await api.t.admin.checkLedger()).differences, []);
    });

    test('a slow original whose claim a retry took over after the lease cannot commit: exactly one of them does', async () => {
      const k = key();
      const original = api.t.core.topup;
      let resume!: () => void;
      const gate = new Promise<void>((resolve) => (resume = resolve));
      let calls = 0;
      let reachedGate!: () => void;
      const atGate = new Promise<void>((resolve) => (reachedGate = resolve));
      api.t.core.topup = async (...args) => {
        if (++calls === 1) {
          reachedGate();
          await gate;
        }
        return original(...args);
      };
      try {
        const wallet = await walletOf(alice);
        const count = (await topups()).length;
        const slow = topup(k, 10);
        await atGate;
        api.t.clock.advance(LEASE_MS);
        const takeover = await topup(k, 10);
        assertSuccess(takeover);
        resume();
        assertFailure(await slow, 409, IN_PROGRESS);

        assert.equal((await topups()).length, count + 1);
        assert.equal(wallet - (await walletOf(alice)), 1055);
        assert.equal((await topup(k, 10)).text, takeover.text);
        assert.deepEqual((await api.t.admin.checkLedger()).differences, []);
      } finally {
        api.t.core.topup = original;
      }
    });

    test('a retry of a committed request replays it, however long after its lease (within the 24 h)', async () => {
      const k = key();
      const first = await topup(k, 12);
      assertSuccess(first);
      api.t.clock.advance(LEASE_MS * 10);
      const again = await topup(k, 12);
      assert.equal(again.text, first.text);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
    });

    test('at most IDEMPOTENCY_MAX_KEYS_PER_USER replies are kept per user: the oldest goes first, other users keep theirs', async () => {
      const carol = await newCustomer(api.t, 1_000_000, 'Carol');
      const carolCard = (await newCard(api.t, carol)).id;
      const dave = await newCustomer(api.t, 1_000_000, 'Dave');
      const daveCard = (await newCard(api.t, dave)).id;
      assertSuccess(await topup('mine', 10, dave, daveCard));
      const replies = [];
      for (const k of ['k1', 'k2', 'k3', 'k4']) {
        api.t.clock.advance(1000);
        replies.push(assertSuccess(await topup(k, 10, carol, carolCard)));
      }
      const kept = await keys()
        .selectFrom('idempotency_keys')
        .select('idempotency_key')
        .where('user_id', '=', carol.userId)
        .orderBy('idempotency_key')
        .execute();
      assert.deepEqual(
        kept.map((r) => r.idempotency_key),
        ['k2', 'k3', 'k4'],
      );
      assert.equal((await topup('mine', 10, dave, daveCard)).headers.get('idempotent-replayed'), 'true');
      assert.equal((await topup('k4', 10, carol, carolCard)).headers.get('idempotent-replayed'), 'true');
      const rerun = await topup('k1', 10, carol, carolCard);
      assert.equal(rerun.headers.get('idempotent-replayed'), null);
      assert.notEqual(assertSuccess(rerun).transaction_id, replies[0].transaction_id);
    });
  });
}
