import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { catalogue, newCard, newCustomer, type Customer } from '../helpers/core.js';
import { assertFailure, assertFields, assertSuccess, startTestApi, type TestApi } from '../helpers/http.js';

// Every error text of section 7 with the status PRODUCT.md decides, auth, ownership and the limits of section 8.

const UNKNOWN_CARD = '00000000-0000-4000-8000-000000000000';

/** Every endpoint of section 4 (and the extensions), with a card id filled in. */
function endpoints(cardId: string): [string, string, unknown?][] {
  return [
    ['GET', '/api/v1/health'],
    ['GET', '/api/v1/bins'],
    ['GET', '/api/v1/card-plans'],
    ['POST', '/api/v1/cards', { bin_id: 'x', name: 'n', planId: 1 }],
    ['GET', `/api/v1/cards/${cardId}`],
    ['POST', `/api/v1/cards/${cardId}/topup`, { amount: 10 }],
    ['POST', `/api/v1/cards/${cardId}/withdraw`, { amount: 10 }],
    ['PATCH', `/api/v1/cards/${cardId}/freeze`],
    ['PATCH', `/api/v1/cards/${cardId}/unfreeze`],
    ['GET', `/api/v1/cards/${cardId}/details`],
    ['PATCH', `/api/v1/cards/${cardId}/close`],
    ['GET', '/api/v1/cards/transactions'],
    ['GET', `/api/v1/cards/${cardId}/otps`],
    ['POST', `/api/v1/cards/${cardId}/otps/request`],
    ['GET', '/api/v1/wallet/balance'],
    ['GET', '/api/v1/cards'],
    ['POST', `/api/v1/cards/${cardId}/topup/quote`, { amount: 10 }],
  ];
}

const isOtpPath = (path: string) => path.includes('/otps');

describe('authentication (section 5): 401 Invalid or missing API token', () => {
  let api: TestApi;
  let alice: Customer;
  let cardId: string;
  before(async () => {
    api = await startTestApi();
    alice = await newCustomer(api.t);
    cardId = (await newCard(api.t, alice)).id;
  });
  after(() => api.close());

  for (const [label, header] of [
    ['no Authorization header', undefined],
    ['a header that is not Bearer', 'Basic dXNlcjpwYXNz'],
    ['an empty bearer token', 'Bearer '],
    ['an unknown token', 'Bearer not-a-real-token'],
  ] as const) {
    test(`every endpoint refuses ${label}`, async () => {
      for (const [method, path, body] of endpoints(cardId)) {
        const r = await api.call(method, path, { body, headers: header === undefined ? {} : { authorization: header } });
        assertFailure(r, 401, 'Invalid or missing API token', isOtpPath(path) ? 'error' : 'message');
        assert.equal(r.headers.get('www-authenticate'), 'Bearer');
      }
    });
  }

  test('a revoked token is refused; another token of the same user still works', async () => {
    const second = await api.t.admin.issueToken(alice.userId);
    assertSuccess(await api.call('GET', '/api/v1/health', { token: second }));
    await api.t.admin.revokeToken(second);
    assertFailure(await api.call('GET', '/api/v1/health', { token: second }), 401, 'Invalid or missing API token');
    assertSuccess(await api.call('GET', '/api/v1/health', { token: alice.token }));
  });
});

describe('ownership: a card of another user reads exactly like a missing one', () => {
  let api: TestApi;
  let alice: Customer;
  let bob: Customer;
  let aliceCard: string;
  before(async () => {
    api = await startTestApi();
    alice = await newCustomer(api.t, 100_000, 'Alice');
    bob = await newCustomer(api.t, 100_000, 'Bob');
    aliceCard = (await newCard(api.t, alice)).id;
    await api.t.admin.simulateOtpEmail(aliceCard);
  });
  after(() => api.close());

  test("every card endpoint answers 404 Card not found or access denied for another user's card, and for an unknown one", async () => {
    const ledgerBefore = await api.t.admin.checkLedger();
    for (const id of [aliceCard, UNKNOWN_CARD, 'not-a-uuid', '42']) {
      for (const [method, path, body] of endpoints(id).filter(([, p]) => p.includes(id))) {
        const r = await api.call(method, path, { token: bob.token, body });
        assertFailure(r, 404, 'Card not found or access denied', isOtpPath(path) ? 'error' : 'message');
      }
    }
    assert.deepEqual(await api.t.admin.checkLedger(), ledgerBefore);
    assertSuccess(await api.call('GET', `/api/v1/cards/${aliceCard}`, { token: alice.token }));
  });

  test("the transactions filter on another user's card is not found; a malformed one is Invalid card_id parameter", async () => {
    assertFailure(
      await api.call('GET', `/api/v1/cards/transactions?card_id=${aliceCard}`, { token: bob.token }),
      404,
      'Card not found or access denied',
    );
    assertFailure(await api.call('GET', '/api/v1/cards/transactions?card_id=abc', { token: bob.token }), 400, 'Invalid card_id parameter');
  });

  test("one user's transactions and cards never show in another's lists", async () => {
    const page = assertSuccess(await api.call('GET', '/api/v1/cards/transactions', { token: bob.token }));
    assert.equal(page.pagination.total, 0);
    assert.deepEqual(assertSuccess(await api.call('GET', '/api/v1/cards', { token: bob.token })), []);
  });

  test('/api/v1/cards/transactions is not a card id', async () => {
    assertSuccess(await api.call('GET', '/api/v1/cards/transactions', { token: alice.token }));
    assertFailure(
      await api.call('PATCH', '/api/v1/cards/transactions/freeze', { token: alice.token }),
      404,
      'Card not found or access denied',
    );
  });

  test('a missing card id is Card ID is required (400)', async () => {
    assertFailure(await api.call('GET', '/api/v1/cards/', { token: alice.token }), 400, 'Card ID is required');
    assertFailure(await api.call('POST', '/api/v1/cards//topup', { token: alice.token, body: { amount: 10 } }), 400, 'Card ID is required');
    assertFailure(await api.call('PATCH', '/api/v1/cards/%20/freeze', { token: alice.token }), 400, 'Card ID is required');
  });
});

describe('refusals of section 7 with their statuses', () => {
  let api: TestApi;
  let alice: Customer;
  before(async () => {
    api = await startTestApi();
    alice = await newCustomer(api.t, 100_000);
    await api.t.admin.setFee('Online', 300, 25);
  });
  after(() => api.close());

  const call = (method: string, path: string, body?: unknown) => api.call(method, path, { token: alice.token, body });

  test('422 Insufficient balance on creation', async () => {
    const poor = await newCustomer(api.t, 100, 'Poor');
    const { bin, plan } = await catalogue(api.t);
    const r = await api.call('POST', '/api/v1/cards', { token: poor.token, body: { bin_id: bin.id, name: 'x', planId: plan.id } });
    assertFailure(r, 422, 'Insufficient balance. Required: 5.00');
  });

  test('422 Invalid BIN ID or BIN is disabled; unknown plan; unusable coupon', async () => {
    const { bin, plan, bins } = await catalogue(api.t);
    assertFailure(
      await call('POST', '/api/v1/cards', { bin_id: UNKNOWN_CARD, name: 'x', planId: plan.id }),
      422,
      'Invalid BIN ID or BIN is disabled',
    );
    await api.t.admin.setBinEnabled(bins[1]!.id, false);
    assertFailure(
      await call('POST', '/api/v1/cards', { bin_id: bins[1]!.id, name: 'x', planId: plan.id }),
      422,
      'Invalid BIN ID or BIN is disabled',
    );
    await api.t.admin.setBinEnabled(bins[1]!.id, true);
    assertFailure(
      await call('POST', '/api/v1/cards', { bin_id: bin.id, name: 'x', planId: 999 }),
      422,
      'Invalid plan ID or plan is inactive',
    );
    assertFailure(
      await call('POST', '/api/v1/cards', { bin_id: bin.id, name: 'x', planId: plan.id, coupon_id: 'NOPE' }),
      422,
      'Invalid coupon: coupon not found',
    );
  });

  test("422 when the BIN's initial balance exceeds the plan's limit, before the provider issues a card; documented", async () => {
    const { plan } = await catalogue(api.t);
    const bin = await api.t.admin.addBin({
      bin: '400002',
      network: 'visa',
      threeDS: true,
      wallet: false,
      currency: 'USD',
      country: 'US',
      initialBalance: 150_000,
    });
    const issued = api.t.sandbox.calls.filter((c) => c.operation === 'issue').length;
    assertFailure(
      await call('POST', '/api/v1/cards', { bin_id: bin.id, name: 'x', planId: plan.id }),
      422,
      'Initial balance of this BIN exceeds the plan limit. Initial balance: 1500.00, Limit: 1000.00',
    );
    assert.equal(api.t.sandbox.calls.filter((c) => c.operation === 'issue').length, issued);
    const doc = (await api.call('GET', '/api/v1/openapi.json')).body;
    const create = doc.paths['/api/v1/cards'].post;
    assert.ok(create.responses['422']);
    assert.match(create.description, /Initial balance of this BIN exceeds the plan limit/);
  });

  test('top-up: 422 card limit, 422 wallet too low, 429 cooldown with Retry-After, then allowed again', async () => {
    const card = await newCard(api.t, alice);
    const path = `/api/v1/cards/${card.id}/topup`;
    assertFailure(
      await call('POST', path, { amount: 1000.01 }),
      422,
      'Topup would exceed card limit. Current deposit: 0.00, Limit: 1000.00, Available: 1000.00',
    );
    const cooldown = await call('POST', path, { amount: 10 });
    assertFailure(cooldown, 429, 'Please wait 120 seconds before topping up this card again');
    assert.equal(cooldown.headers.get('retry-after'), '120');
    api.t.clock.advance(30_000);
    const later = await call('POST', path, { amount: 10 });
    assertFailure(later, 429, 'Please wait 90 seconds before topping up this card again');
    assert.equal(later.headers.get('retry-after'), '90');
    api.t.clock.advance(90_000);
    const poor = await newCustomer(api.t, 1_000, 'Low');
    const poorCard = await newCard(api.t, poor);
    assertFailure(
      await api.call('POST', `/api/v1/cards/${poorCard.id}/topup`, { token: poor.token, body: { amount: 10 } }),
      422,
      'Insufficient wallet balance. Required: 10.55 (topup: 10.00 + platform fee: 0.55), Available: 5.00',
    );
    assertSuccess(await call('POST', path, { amount: 10 }));
  });

  test('withdraw: 422 card balance too low, 429 the 15-minute cooldown, 409 not ready', async () => {
    const card = await newCard(api.t, alice);
    const r = await call('POST', `/api/v1/cards/${card.id}/withdraw`, { amount: 1 });
    assertFailure(r, 422, 'Insufficient card balance. Available: 0.00, Requested: 1.00');
    const again = await call('POST', `/api/v1/cards/${card.id}/withdraw`, { amount: 1 });
    assertFailure(again, 429, 'Please wait 15 minutes between withdrawals');
    assert.equal(again.headers.get('retry-after'), '900');
    assertFailure(await call('PATCH', `/api/v1/cards/${card.id}/close`), 429, 'Please wait 15 minutes between withdrawals');
  });

  test('409 state conflicts: already frozen, only active frozen, only frozen unfrozen, already closed, closed card top-up', async () => {
    const card = await newCard(api.t, alice);
    assertFailure(await call('PATCH', `/api/v1/cards/${card.id}/unfreeze`), 409, 'Only frozen cards can be unfrozen');
    assertSuccess(await call('PATCH', `/api/v1/cards/${card.id}/freeze`));
    assertFailure(await call('PATCH', `/api/v1/cards/${card.id}/freeze`), 409, 'Card is already frozen');
    assertSuccess(await call('PATCH', `/api/v1/cards/${card.id}/close`));
    assertFailure(await call('PATCH', `/api/v1/cards/${card.id}/close`), 409, 'Card is already closed');
    assertFailure(await call('PATCH', `/api/v1/cards/${card.id}/freeze`), 409, 'Only active cards can be frozen');
    assertFailure(await call('POST', `/api/v1/cards/${card.id}/topup`, { amount: 10 }), 409, 'Card is closed');
  });

  test('409 every "not ready" text while the card carries a temporary provider id', async () => {
    api.t.sandbox.issueAsynchronously = true;
    const card = await newCard(api.t, alice);
    api.t.sandbox.issueAsynchronously = false;
    assertFailure(await call('PATCH', `/api/v1/cards/${card.id}/freeze`), 409, 'Card is not ready for freeze operation');
    assertFailure(await call('POST', `/api/v1/cards/${card.id}/withdraw`, { amount: 1 }), 409, 'Card is not ready for withdrawals');
    api.t.clock.advance(900_000);
    assertFailure(await call('PATCH', `/api/v1/cards/${card.id}/close`), 409, 'Card not ready for closure');
    await api.t.database.db.updateTable('cards').set({ status: 'frozen' }).where('id', '=', card.id).execute();
    assertFailure(await call('PATCH', `/api/v1/cards/${card.id}/unfreeze`), 409, 'Card is not ready for unfreeze operation');
  });

  test('502 Failed to close card: <provider message>', async () => {
    const card = await newCard(api.t, alice);
    api.t.sandbox.failNext('terminate', 'provider unavailable');
    assertFailure(await call('PATCH', `/api/v1/cards/${card.id}/close`), 502, 'Failed to close card: provider unavailable');
  });

  test('404 No OTP found for this card, in `error`', async () => {
    const card = await newCard(api.t, alice);
    assertFailure(await call('POST', `/api/v1/cards/${card.id}/otps/request`), 404, 'No OTP found for this card', 'error');
  });

  test('404 Route not found for an unknown route or method', async () => {
    assertFailure(await call('GET', '/api/v1/nothing'), 404, 'Route not found');
    assertFailure(await call('DELETE', '/api/v1/wallet/balance'), 404, 'Route not found');
  });

  test('500 for an unexpected fault: a generic text, never the error itself', async () => {
    const original = api.t.core.walletBalance;
    api.t.core.walletBalance = async () => {
      throw new Error('SQLITE_ERROR: no such column secret_column in select * from accounts');
    };
    try {
      const r = await call('GET', '/api/v1/wallet/balance');
      assertFailure(r, 500, 'Internal server error');
      assert.ok(!/SQLITE|select|secret/i.test(r.text));
    } finally {
      api.t.core.walletBalance = original;
    }
  });
});

describe('validation (section 7) and the limits of section 8', () => {
  let api: TestApi;
  let alice: Customer;
  let cardId: string;
  before(async () => {
    api = await startTestApi();
    alice = await newCustomer(api.t, 10_000_000);
    const { bin, plans } = await catalogue(api.t);
    cardId = (await api.t.core.createCard(alice.caller, { bin_id: bin.id, planId: plans[2]!.id, name: 'Big' })).id;
  });
  after(() => api.close());

  const topup = (amount: unknown) => {
    api.t.clock.advance(120_000);
    return api.call('POST', `/api/v1/cards/${cardId}/topup`, { token: alice.token, body: { amount } });
  };
  const withdraw = (amount: unknown) => {
    api.t.clock.advance(900_000);
    return api.call('POST', `/api/v1/cards/${cardId}/withdraw`, { token: alice.token, body: { amount } });
  };

  function assertInvalid(r: Awaited<ReturnType<typeof topup>>, item: Record<string, unknown>): void {
    assert.equal(r.status, 400, r.text);
    assertFields(r.body, { success: 'boolean', message: 'string', error: 'array', timestamp: 'string' });
    assert.equal(r.body.message, 'Invalid input data');
    assert.deepEqual(r.body.error, [item]);
  }

  test('a top-up under 5 is refused with the spec item: code, minimum, type, inclusive, exact, message, path', async () => {
    assertInvalid(await topup(4.99), {
      code: 'too_small',
      minimum: 5,
      type: 'number',
      inclusive: true,
      exact: false,
      message: 'Minimum top-up amount is 5',
      path: ['amount'],
    });
  });

  test('top-up edges: 5.00 and 10,000.00 pass; 10,000.01 and 3 decimals do not', async () => {
    assertSuccess(await topup(5));
    assertSuccess(await topup(10_000));
    assertInvalid(await topup(10_000.01), {
      code: 'too_big',
      maximum: 10000,
      type: 'number',
      inclusive: true,
      exact: false,
      message: 'Maximum top-up amount is 10000',
      path: ['amount'],
    });
    const r = await topup(5.001);
    assert.equal(r.status, 400);
    assert.equal(r.body.error[0].message, 'Amount must have at most 2 decimal places');
  });

  test('withdrawal edges: 1.00 and 10,000.00 pass; 0.99 is Minimum withdrawal amount is 1.00', async () => {
    assertSuccess(await withdraw(1));
    assertSuccess(await withdraw(10_000));
    assertInvalid(await withdraw(0.99), {
      code: 'too_small',
      minimum: 1,
      type: 'number',
      inclusive: true,
      exact: false,
      message: 'Minimum withdrawal amount is 1.00',
      path: ['amount'],
    });
    assert.equal((await withdraw(10_000.01)).status, 400);
  });

  test('card name: 1 to 255 characters; an empty name is Card name is required', async () => {
    const { bin, plan } = await catalogue(api.t);
    const create = (name: unknown) =>
      api.call('POST', '/api/v1/cards', { token: alice.token, body: { bin_id: bin.id, planId: plan.id, name } });
    assertInvalid(await create(''), {
      code: 'too_small',
      minimum: 1,
      type: 'string',
      inclusive: true,
      exact: false,
      message: 'Card name is required',
      path: ['name'],
    });
    assertSuccess(await create('x'), 201);
    assertSuccess(await create('n'.repeat(255)), 201);
    const long = await create('n'.repeat(256));
    assert.equal(long.status, 400);
    assert.equal(long.body.error[0].code, 'too_big');
    assert.equal(long.body.error[0].maximum, 255);
    const missing = await api.call('POST', '/api/v1/cards', { token: alice.token, body: { bin_id: bin.id, planId: plan.id } });
    assert.equal(missing.body.error[0].message, 'Card name is required');
  });

  test('page size: default 20, 100 allowed, 101 and 0 refused; page 0 refused', async () => {
    const get = (q: string) => api.call('GET', `/api/v1/cards/transactions${q}`, { token: alice.token });
    assert.equal(assertSuccess(await get('')).pagination.limit, 20);
    assert.equal(assertSuccess(await get('?limit=100')).pagination.limit, 100);
    assert.equal(assertSuccess(await get('?page=1')).pagination.page, 1);
    for (const q of ['?limit=101', '?limit=0', '?page=0', '?page=-1', '?page=abc', '?limit=1.5', '?page=1&page=2', '?unknown=1']) {
      const r = await get(q);
      assert.equal(r.status, 400, q);
      assert.equal(r.body.message, 'Invalid input data');
    }
  });
});

describe('bad input never reaches the core and changes nothing', () => {
  let api: TestApi;
  let alice: Customer;
  let cardId: string;
  before(async () => {
    api = await startTestApi({ bodyLimit: 2048 });
    alice = await newCustomer(api.t, 100_000);
    cardId = (await newCard(api.t, alice)).id;
  });
  after(() => api.close());

  const cases: [string, { body?: string; headers?: Record<string, string> }, number, string][] = [
    ['malformed JSON', { body: '{"amount": 10' }, 400, 'Malformed JSON in request body'],
    ['a __proto__ key', { body: '{"amount": 10, "__proto__": {"admin": true}}' }, 400, 'Malformed JSON in request body'],
    ['a constructor key', { body: '{"amount": 10, "constructor": {"prototype": {}}}' }, 400, 'Malformed JSON in request body'],
    [
      'a text/plain body',
      { body: '{"amount": 10}', headers: { 'content-type': 'text/plain' } },
      415,
      'Content-Type must be application/json',
    ],
    [
      'a form body',
      { body: 'amount=10', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      415,
      'Content-Type must be application/json',
    ],
    ['a body over the size limit', { body: JSON.stringify({ amount: 10, pad: 'x'.repeat(4096) }) }, 413, 'Request body is too large'],
    ['an extra field', { body: '{"amount": 10, "card_id": "x"}' }, 400, 'Invalid input data'],
    ['an amount as a string', { body: '{"amount": "10"}' }, 400, 'Invalid input data'],
    ['an infinite amount', { body: '{"amount": 1e400}' }, 400, 'Invalid input data'],
    ['a huge amount', { body: '{"amount": 1e300}' }, 400, 'Invalid input data'],
    ['a negative amount', { body: '{"amount": -10}' }, 400, 'Invalid input data'],
    ['null', { body: 'null' }, 400, 'Invalid input data'],
    ['an array', { body: '[10]' }, 400, 'Invalid input data'],
    ['no body', {}, 400, 'Invalid input data'],
    ['an empty JSON body', { body: '', headers: { 'content-type': 'application/json' } }, 400, 'Invalid input data'],
  ];

  for (const [label, { body, headers }, status, text] of cases) {
    test(`${label}: ${status} ${text}`, async () => {
      const ledger = await api.t.admin.checkLedger();
      const card = await api.t.core.getCard(alice.caller, cardId);
      const r = await api.call('POST', `/api/v1/cards/${cardId}/topup`, { token: alice.token, body, headers });
      assert.equal(r.status, status, r.text);
      assert.equal(r.body.success, false);
      assert.equal(r.body.message, text);
      assert.deepEqual(await api.t.admin.checkLedger(), ledger);
      // The core was never asked: a real attempt would have started the top-up cooldown.
      assert.deepEqual(await api.t.core.getCard(alice.caller, cardId), card);
      assertSuccess(await api.call('POST', `/api/v1/cards/${cardId}/topup/quote`, { token: alice.token, body: { amount: 10 } }));
    });
  }

  test('a POST without a body names the missing field', async () => {
    const r = await api.call('POST', `/api/v1/cards/${cardId}/topup`, { token: alice.token });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.error, [{ code: 'invalid_type', type: 'number', message: 'Amount is required', path: ['amount'] }]);
  });

  test('a body on an endpoint that takes none is refused unless empty', async () => {
    assert.equal(
      (await api.call('PATCH', `/api/v1/cards/${cardId}/freeze`, { token: alice.token, body: { status: 'active' } })).status,
      400,
    );
    assertSuccess(await api.call('PATCH', `/api/v1/cards/${cardId}/freeze`, { token: alice.token, body: {} }));
    assertSuccess(
      await api.call('PATCH', `/api/v1/cards/${cardId}/unfreeze`, {
        token: alice.token,
        body: '',
        headers: { 'content-type': 'application/json' },
      }),
    );
  });

  test("validation items are in our words, never the library's: unknown fields, wrong types, empty and long values", async () => {
    const items = async (method: string, path: string, body: unknown) => {
      const r = await api.call(method, path, { token: alice.token, body });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.message, 'Invalid input data');
      return r.body.error as { code: string; message: string; path: unknown[]; type?: string }[];
    };
    const { bin, plan } = await catalogue(api.t);
    const create = (extra: Record<string, unknown>) =>
      items('POST', '/api/v1/cards', { bin_id: bin.id, name: 'x', planId: plan.id, ...extra });
    assert.deepEqual(await items('POST', `/api/v1/cards/${cardId}/topup`, { amount: 10, card_id: 'x', extra: 1 }), [
      { code: 'unrecognized_keys', message: 'Unknown field: card_id', path: ['card_id'] },
      { code: 'unrecognized_keys', message: 'Unknown field: extra', path: ['extra'] },
    ]);
    assert.deepEqual(
      (await create({ planId: 1.5 })).map((i) => [i.message, i.type]),
      [['Plan ID must be an integer', 'number']],
    );
    assert.deepEqual(
      (await create({ planId: '1' })).map((i) => i.message),
      ['Plan ID must be an integer'],
    );
    assert.deepEqual(
      (await create({ bin_id: 'b'.repeat(65) })).map((i) => i.message),
      ['BIN ID must be at most 64 characters'],
    );
    assert.deepEqual(
      (await create({ coupon_id: '' })).map((i) => i.message),
      ['Coupon ID must not be empty'],
    );
    assert.deepEqual(
      (await create({ name: 7 })).map((i) => i.message),
      ['Card name must be a string'],
    );
    assert.deepEqual(
      (await items('PATCH', `/api/v1/cards/${cardId}/close`, [1])).map((i) => i.message),
      ['This endpoint takes no request body'],
    );
    const page = await api.call('GET', '/api/v1/cards/transactions?page=12345678901', { token: alice.token });
    assert.deepEqual(
      page.body.error.map((i: { message: string }) => i.message),
      ['page must be at most 1000000'],
    );
    const twice = await api.call('GET', `/api/v1/cards/transactions?card_id=${cardId}&card_id=${cardId}`, { token: alice.token });
    assert.deepEqual(
      twice.body.error.map((i: { message: string }) => i.message),
      ['card_id must be given once'],
    );
    for (const r of [page, twice]) assert.ok(!/Invalid input:|expected|received/.test(r.text), r.text);
    const unknownQuery = await api.call('GET', '/api/v1/wallet/balance?verbose=1', { token: alice.token });
    assert.equal(unknownQuery.status, 400);
    assert.deepEqual(unknownQuery.body.error, [{ code: 'unrecognized_keys', message: 'Unknown field: verbose', path: ['verbose'] }]);
  });

  test("HTTP that cannot be parsed is answered with an envelope too (400, 431), never the framework's body", async () => {
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const { hostname, port } = new URL(api.baseUrl);
        const socket = connect(Number(port), hostname, () => socket.end(request));
        let text = '';
        socket.on('data', (chunk) => (text += chunk.toString('utf8')));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
      });
    for (const [request, status, text] of [
      ['GARBAGE\r\n\r\n', 400, 'Malformed HTTP request'],
      ['GET /api/v1/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n', 400, 'Malformed HTTP request'],
      [`GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'Request headers are too large'],
    ] as const) {
      const reply = await raw(request);
      assert.match(reply, new RegExp(`^HTTP/1.1 ${status} `));
      const body = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4));
      assert.equal(body.success, false);
      assert.equal(body.message, text);
      assert.match(body.timestamp, /Z$/);
    }
  });

  test('a malformed URL and an over-long id are envelopes too', async () => {
    assertFailure(await api.call('GET', '/api/v1/cards/%zz', { token: alice.token }), 400, 'Invalid URL');
    assertFailure(await api.call('GET', `/api/v1/cards/${'a'.repeat(150)}`, { token: alice.token }), 414, 'URL is too long');
  });
});
