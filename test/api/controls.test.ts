import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CATEGORY_GROUP_NAMES } from '../../src/core/authorization/categories.js';
import { catalogue, newCard, newCustomer, type Customer } from '../helpers/core.js';
import { assertFailure, assertFields, assertSuccess, startTestApi, type TestApi } from '../helpers/http.js';

// Our extension (issue 33, sections 2 and 3): a card's spending controls and auto top-up over HTTP, its type
// chosen at creation, and the card record carrying them. Every exchange is also checked against the OpenAPI
// document by `startTestApi`'s close.

const CONTROLS_VIEW: Parameters<typeof assertFields>[1] = {
  per_purchase_limit: ['number', 'null'],
  daily_limit: ['number', 'null'],
  monthly_limit: ['number', 'null'],
  blocked_categories: 'array',
  spent_today: 'number',
  spent_this_month: 'number',
};

const AUTO_TOPUP: Parameters<typeof assertFields>[1] = {
  enabled: 'boolean',
  min_balance: 'number',
  topup_amount: 'number',
  last_triggered: ['string', 'null'],
};

/** The first validation item's message of a 400. */
function refusedItem(r: { status: number; body: any }): string {
  assert.equal(r.status, 400, JSON.stringify(r.body));
  assert.equal(r.body.message, 'Invalid input data');
  return r.body.error[0].message as string;
}

describe('spending controls and auto top-up over HTTP', () => {
  let api: TestApi;
  let alice: Customer;
  let bob: Customer;

  before(async () => {
    api = await startTestApi();
    alice = await newCustomer(api.t, 100_000);
    bob = await newCustomer(api.t, 100_000, 'Bob');
  });
  after(() => api.close());

  const as = (who: Customer) => (method: string, path: string, body?: unknown) => api.call(method, path, { token: who.token, body });
  const call = (method: string, path: string, body?: unknown) => as(alice)(method, path, body);

  test('GET controls of a new card: no limits, nothing blocked, nothing spent', async () => {
    const card = await newCard(api.t, alice);
    const data = assertSuccess(await call('GET', `/api/v1/cards/${card.id}/controls`));
    assertFields(data, CONTROLS_VIEW);
    assert.deepEqual(data, {
      per_purchase_limit: null,
      daily_limit: null,
      monthly_limit: null,
      blocked_categories: [],
      spent_today: 0,
      spent_this_month: 0,
    });
  });

  test('PUT controls sets the limits in USD and the categories; a field left out stays; null removes a limit', async () => {
    const card = await newCard(api.t, alice);
    const set = await call('PUT', `/api/v1/cards/${card.id}/controls`, {
      per_purchase_limit: 25.5,
      daily_limit: 100,
      monthly_limit: 19.4,
      blocked_categories: ['gambling', 'crypto'],
    });
    assert.equal(set.body.message, 'Card controls updated successfully');
    assert.deepEqual(assertSuccess(set), {
      per_purchase_limit: 25.5,
      daily_limit: 100,
      monthly_limit: 19.4,
      blocked_categories: ['gambling', 'crypto'],
      spent_today: 0,
      spent_this_month: 0,
    });
    const changed = assertSuccess(await call('PUT', `/api/v1/cards/${card.id}/controls`, { daily_limit: null, blocked_categories: [] }));
    assert.deepEqual(
      [changed.per_purchase_limit, changed.daily_limit, changed.monthly_limit, changed.blocked_categories],
      [25.5, null, 19.4, []],
    );
    assert.deepEqual(assertSuccess(await call('GET', `/api/v1/cards/${card.id}/controls`)), changed);
  });

  test('PUT controls refuses: an unknown category (naming the allowed ones), a limit of zero, negative, a third decimal, a string, an unknown field', async () => {
    const card = await newCard(api.t, alice);
    const path = `/api/v1/cards/${card.id}/controls`;
    assert.equal(
      refusedItem(await call('PUT', path, { blocked_categories: ['casino'] })),
      `Unknown category: casino. Allowed: ${CATEGORY_GROUP_NAMES.join(', ')}`,
    );
    assert.equal(refusedItem(await call('PUT', path, { daily_limit: 0 })), 'Daily limit must be positive');
    assert.equal(refusedItem(await call('PUT', path, { monthly_limit: -5 })), 'Monthly limit must be positive');
    assert.equal(
      refusedItem(await call('PUT', path, { per_purchase_limit: 1.001 })),
      'Per-purchase limit must have at most 2 decimal places',
    );
    assert.equal(refusedItem(await call('PUT', path, { per_purchase_limit: '10' })), 'Per-purchase limit must be a number');
    assert.equal(refusedItem(await call('PUT', path, { weekly_limit: 10 })), 'Unknown field: weekly_limit');
    assert.equal(assertSuccess(await call('GET', path)).daily_limit, null, 'nothing changed');
  });

  test("another user's card, a missing card and a malformed id answer as the other card routes do; a closed card refuses a change", async () => {
    const card = await newCard(api.t, alice);
    const theirs = as(bob);
    for (const [method, suffix, body] of [
      ['GET', 'controls', undefined],
      ['PUT', 'controls', { daily_limit: 10 }],
      ['PUT', 'auto-topup', { enabled: true, min_balance: 5, topup_amount: 20 }],
    ] as const) {
      assertFailure(await theirs(method, `/api/v1/cards/${card.id}/${suffix}`, body), 404, 'Card not found or access denied');
      assertFailure(await call(method, `/api/v1/cards/${randomUUID()}/${suffix}`, body), 404, 'Card not found or access denied');
      assertFailure(await call(method, `/api/v1/cards/not-a-card/${suffix}`, body), 404, 'Card not found or access denied');
    }
    assertFailure(await theirs('GET', `/api/v1/cards/${card.id}`), 404, 'Card not found or access denied');
    assertSuccess(await call('PATCH', `/api/v1/cards/${card.id}/close`));
    assertFailure(await call('PUT', `/api/v1/cards/${card.id}/controls`, { daily_limit: 10 }), 409, 'Card is closed');
    assertFailure(
      await call('PUT', `/api/v1/cards/${card.id}/auto-topup`, { enabled: false, min_balance: 0, topup_amount: 10 }),
      409,
      'Card is closed',
    );
    assert.equal(assertSuccess(await call('GET', `/api/v1/cards/${card.id}/controls`)).daily_limit, null, 'a closed card still reads');
  });

  test('PUT auto-topup sets it in the earlier shape; its amounts formatted as the balance is', async () => {
    const card = await newCard(api.t, alice);
    const r = await call('PUT', `/api/v1/cards/${card.id}/auto-topup`, { enabled: true, min_balance: 10.5, topup_amount: 25 });
    assert.equal(r.body.message, 'Auto top-up updated successfully');
    const data = assertSuccess(r);
    assertFields(data, AUTO_TOPUP);
    assert.deepEqual(data, { enabled: true, min_balance: 10.5, topup_amount: 25, last_triggered: null });
    const off = assertSuccess(await call('PUT', `/api/v1/cards/${card.id}/auto-topup`, { enabled: false }));
    assert.deepEqual(off, { enabled: false, min_balance: 10.5, topup_amount: 25, last_triggered: null }, 'turned off, the amounts stay');
  });

  test("PUT auto-topup refuses: below the minimum top-up, above the plan's limit, a negative minimum balance, on without an amount, enabled missing", async () => {
    const card = await newCard(api.t, alice);
    const { plan } = await catalogue(api.t);
    const path = `/api/v1/cards/${card.id}/auto-topup`;
    assert.equal(refusedItem(await call('PUT', path, { enabled: true, min_balance: 0, topup_amount: 4.99 })), 'Minimum top-up amount is 5');
    const overLimit = plan.limit / 100 + 1;
    const message = refusedItem(await call('PUT', path, { enabled: true, min_balance: 0, topup_amount: Math.min(overLimit, 10_000) }));
    assert.ok(overLimit <= 10_000 ? message.endsWith("the card's plan limit") : message === 'Maximum top-up amount is 10000', message);
    assert.equal(
      refusedItem(await call('PUT', path, { enabled: true, min_balance: -1, topup_amount: 10 })),
      'Minimum balance must not be negative',
    );
    assert.equal(refusedItem(await call('PUT', path, { enabled: true })), 'Top-up amount is required to turn auto top-up on');
    assert.equal(refusedItem(await call('PUT', path, { min_balance: 1, topup_amount: 10 })), 'enabled is required');
    assert.deepEqual(assertSuccess(await call('GET', `/api/v1/cards/${card.id}`)).auto_topup.enabled, false);
  });

  test('POST /cards takes an optional type (multi_use by default); a bad one is a clear 400', async () => {
    const { bin, plan } = await catalogue(api.t);
    const create = (type?: string) =>
      call('POST', '/api/v1/cards', { bin_id: bin.id, planId: plan.id, name: 'Typed', ...(type && { type }) });
    const plain = assertSuccess(await create(), 201);
    const single = assertSuccess(await create('single_use'), 201);
    const locked = assertSuccess(await create('merchant_locked'), 201);
    const types = [];
    for (const { id } of [plain, single, locked]) types.push(assertSuccess(await call('GET', `/api/v1/cards/${id}`)).type);
    assert.deepEqual(types, ['multi_use', 'single_use', 'merchant_locked']);
    assert.equal(refusedItem(await create('reusable')), 'Card type must be one of: multi_use, single_use, merchant_locked');
  });

  test('the card record (4.5) carries type, controls, spent today and this month, and auto_topup', async () => {
    const card = await newCard(api.t, alice);
    await call('PUT', `/api/v1/cards/${card.id}/controls`, { daily_limit: 50, blocked_categories: ['travel'] });
    await call('PUT', `/api/v1/cards/${card.id}/auto-topup`, { enabled: true, min_balance: 5, topup_amount: 20 });
    const now = api.t.clock.now().toISOString();
    await api.t.database.db
      .insertInto('card_authorizations')
      .values({
        id: randomUUID(),
        provider_transaction_id: randomUUID(),
        card_id: card.id,
        user_id: alice.userId,
        status: 'pending',
        amount: 1_940,
        cleared_amount: null,
        currency: 'USD',
        merchant_name: 'STEAM',
        merchant_mcc: '5816',
        merchant_country: 'US',
        decline_code: null,
        expires_at: now,
        created_at: now,
        updated_at: now,
      })
      .execute();
    const data = assertSuccess(await call('GET', `/api/v1/cards/${card.id}`));
    assert.equal(data.type, 'multi_use');
    assert.deepEqual(data.controls, { per_purchase_limit: null, daily_limit: 50, monthly_limit: null, blocked_categories: ['travel'] });
    assert.deepEqual([data.spent_today, data.spent_this_month], [19.4, 19.4]);
    assert.deepEqual(data.auto_topup, { enabled: true, min_balance: 5, topup_amount: 20, last_triggered: null });
    assert.equal(typeof data.balance, 'number', 'amounts are numbers like the balance');
    const listed = assertSuccess(await call('GET', '/api/v1/cards')).find((c: { id: string }) => c.id === card.id);
    assert.deepEqual([listed.spent_today, listed.controls.daily_limit, listed.auto_topup.topup_amount], [19.4, 50, 20]);
  });
});
