import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { catalogue, newCustomer, type Customer } from '../helpers/core.js';
import { assertFields, assertSuccess, isIsoTime, startTestApi, type TestApi } from '../helpers/http.js';

// Every endpoint's success shape, field by field, against the spec's tables (sections 2 and 4).

const CARD_FIELDS = {
  id: 'string',
  created_at: 'string',
  updated_at: 'string',
  category: 'string',
  masked_PAN: 'string',
  name: 'string',
  balance: 'number',
  deposit: 'number',
  status: 'string',
  currency: 'string',
  currency_short_name: 'string',
  bin_id: 'string',
  '3ds': 'boolean',
  // Ours (issue 33; test/api/controls.test.ts): the card's type, controls, spending and auto top-up.
  type: 'string',
  controls: 'object',
  spent_today: 'number',
  spent_this_month: 'number',
  auto_topup: 'object',
} as const;

describe('the spec endpoints answer in their current shapes', () => {
  let api: TestApi;
  let alice: Customer;
  let cardId: string;

  before(async () => {
    api = await startTestApi();
    alice = await newCustomer(api.t, 100_000);
    await api.t.admin.setFee('Online', 300, 25); // 3% + 0.25
  });
  after(() => api.close());

  const get = (path: string) => api.call('GET', path, { token: alice.token });

  test('4.1 health: status healthy, environment, timestamp', async () => {
    const r = await get('/api/v1/health');
    const data = assertSuccess(r);
    assertFields(data, { status: 'string', environment: 'string', timestamp: 'string' });
    assert.equal(data.status, 'healthy');
    assert.equal(r.body.message, 'API is healthy');
    assert.ok(isIsoTime(data.timestamp));
  });

  test('4.2 bins: only enabled BINs, with the current fields', async () => {
    const { bins } = await catalogue(api.t);
    await api.t.admin.setBinEnabled(bins[3]!.id, false);
    const data = assertSuccess(await get('/api/v1/bins'));
    assert.equal(data.length, bins.length - 1);
    assert.ok(!data.some((b: { id: string }) => b.id === bins[3]!.id));
    for (const bin of data) {
      assertFields(bin, {
        id: 'string',
        bin: 'string',
        network: 'string',
        threeDS: 'boolean',
        wallet: 'boolean',
        currency: 'string',
        country: 'string',
        initial_balance: 'number',
      });
      assert.match(bin.bin, /^\d{6}$/);
    }
    assert.ok(data.some((b: { initial_balance: number }) => b.initial_balance === 5));
    await api.t.admin.setBinEnabled(bins[3]!.id, true);
  });

  test('4.3 card-plans: integer id, limit and creation fee as numbers', async () => {
    const data = assertSuccess(await get('/api/v1/card-plans'));
    assert.ok(data.length >= 3);
    for (const plan of data) {
      assertFields(plan, {
        id: 'integer',
        name: 'string',
        description: 'string',
        limit: 'number',
        creation_fee: 'number',
        created_at: 'string',
      });
    }
    assert.deepEqual(
      data.map((p: { limit: number }) => p.limit),
      [1000, 5000, 25000],
    );
    assert.deepEqual(
      data.map((p: { creation_fee: number }) => p.creation_fee),
      [5, 15, 49],
    );
  });

  test('4.4 create card: 201, the creation result with its address, the fee taken from the wallet', async () => {
    const { bin, plan } = await catalogue(api.t, 'Online');
    const r = await api.call('POST', '/api/v1/cards', { token: alice.token, body: { bin_id: bin.id, name: 'Ads', planId: plan.id } });
    const data = assertSuccess(r, 201);
    assertFields(data, { id: 'string', category: 'string', status: 'string', balance: 'number', address: 'object' });
    assertFields(data.address, {
      city: 'string',
      line1: 'string',
      line2: ['string', 'null'],
      state: 'string',
      country: 'string',
      postalCode: 'string',
    });
    assert.equal(data.status, 'active');
    assert.equal(data.category, 'Online');
    assert.equal(data.balance, 0);
    assert.match(data.id, /^[0-9a-f-]{36}$/);
    cardId = data.id;
    const wallet = assertSuccess(await get('/api/v1/wallet/balance'));
    assert.equal(wallet.balance, 995);
  });

  test("4.4 a BIN's initial balance lands on the new card", async () => {
    const bins = await api.t.core.listBins();
    const withInitial = bins.find((b) => b.initialBalance > 0)!;
    const { plan } = await catalogue(api.t);
    const r = await api.call('POST', '/api/v1/cards', {
      token: alice.token,
      body: { bin_id: withInitial.id, name: 'Promo', planId: plan.id },
    });
    const data = assertSuccess(r, 201);
    assert.equal(data.balance, 5);
    assert.equal(data.category, 'Wallet');
  });

  test('4.5 card detail: exactly the current non-sensitive fields, no PAN, CVV or EXP', async () => {
    const data = assertSuccess(await get(`/api/v1/cards/${cardId}`));
    assertFields(data, CARD_FIELDS);
    assert.equal(data.id, cardId);
    assert.equal(data.status, 'active');
    assert.equal(data.currency, 'USD');
    assert.equal(data.currency_short_name, 'USD');
    assert.match(data.masked_PAN, /\d{4}$/);
    assert.ok(!/\d{5}/.test(data.masked_PAN.replace(/\s/g, '').slice(0, -4)));
  });

  test("extension GET /api/v1/cards: the caller's cards in the card-detail shape", async () => {
    const data = assertSuccess(await get('/api/v1/cards'));
    assert.equal(data.length, 2);
    for (const card of data) assertFields(card, CARD_FIELDS);
  });

  test('4.10 sensitive details: id, PAN, CVV, EXP, masked_PAN, name; not cached', async () => {
    const r = await get(`/api/v1/cards/${cardId}/details`);
    const data = assertSuccess(r);
    assertFields(data, { id: 'string', PAN: 'string', CVV: 'string', EXP: 'string', masked_PAN: 'string', name: 'string' });
    assert.match(data.PAN, /^\d{16}$/);
    assert.match(data.CVV, /^\d{3,4}$/);
    assert.match(data.EXP, /^(0[1-9]|1[0-2])\/\d{2}$/);
    assert.equal(data.masked_PAN.slice(-4), data.PAN.slice(-4));
    assert.equal(r.headers.get('cache-control'), 'no-store');
  });

  test('extension top-up quote: what a top-up costs, changing nothing', async () => {
    const before = assertSuccess(await get('/api/v1/wallet/balance')).balance;
    const data = assertSuccess(
      await api.call('POST', `/api/v1/cards/${cardId}/topup/quote`, { token: alice.token, body: { amount: 100 } }),
    );
    assertFields(data, {
      card_id: 'string',
      category: 'string',
      amount: 'number',
      platform_fee_amount: 'number',
      total_charged: 'number',
      wallet_balance: 'number',
      deposit_available: 'number',
      topup_cooldown_seconds: 'integer',
      max_amount: 'number',
    });
    assert.deepEqual(
      {
        amount: data.amount,
        fee: data.platform_fee_amount,
        total: data.total_charged,
        wallet: data.wallet_balance,
        available: data.deposit_available,
        cooldown: data.topup_cooldown_seconds,
      },
      { amount: 100, fee: 3.25, total: 103.25, wallet: before, available: 1000, cooldown: 0 },
    );
    assert.equal(assertSuccess(await get('/api/v1/wallet/balance')).balance, before);
  });

  test('4.6 top-up: the current result shape, the fee on top, money with 2 decimals', async () => {
    const before = assertSuccess(await get('/api/v1/wallet/balance')).balance;
    const r = await api.call('POST', `/api/v1/cards/${cardId}/topup`, { token: alice.token, body: { amount: 100.1 } });
    const data = assertSuccess(r);
    assertFields(data, {
      card_id: 'string',
      transaction_id: 'string',
      invoice_id: 'integer',
      wallet_balance: 'number',
      total_charged: 'number',
      platform_fee_amount: 'number',
      new_card_balance: 'number',
    });
    assert.equal(data.card_id, cardId);
    assert.equal(data.platform_fee_amount, 3.25); // 3% of 100.10 = 3.003 → 3.00, + 0.25
    assert.equal(data.total_charged, 103.35);
    assert.equal(data.new_card_balance, 100.1);
    assert.equal(data.wallet_balance, Math.round((before - 103.35) * 100) / 100);
  });

  test('4.7 withdraw: the current result shape', async () => {
    const data = assertSuccess(await api.call('POST', `/api/v1/cards/${cardId}/withdraw`, { token: alice.token, body: { amount: 10.05 } }));
    assertFields(data, {
      card_id: 'string',
      transaction_id: 'string',
      invoice_id: 'integer',
      wallet_balance: 'number',
      new_card_balance: 'number',
      amount_withdrawn: 'number',
    });
    assert.equal(data.amount_withdrawn, 10.05);
    assert.equal(data.new_card_balance, 90.05);
  });

  test('4.8 and 4.9 freeze and unfreeze: card_id and the new status', async () => {
    const frozen = assertSuccess(await api.call('PATCH', `/api/v1/cards/${cardId}/freeze`, { token: alice.token }));
    assertFields(frozen, { card_id: 'string', status: 'string' });
    assert.deepEqual(frozen, { card_id: cardId, status: 'frozen' });
    const active = assertSuccess(await api.call('PATCH', `/api/v1/cards/${cardId}/unfreeze`, { token: alice.token }));
    assert.deepEqual(active, { card_id: cardId, status: 'active' });
  });

  test('4.12 transactions: records and pagination, newest first, /cards/transactions is not a card id', async () => {
    const data = assertSuccess(await get('/api/v1/cards/transactions?limit=1'));
    assertFields(data, { data: 'array', pagination: 'object' });
    assertFields(data.pagination, {
      page: 'integer',
      limit: 'integer',
      total: 'integer',
      totalPages: 'integer',
      hasNext: 'boolean',
      hasPrev: 'boolean',
    });
    assert.deepEqual(data.pagination, { page: 1, limit: 1, total: 3, totalPages: 3, hasNext: true, hasPrev: false });
    const [tx] = data.data;
    assertFields(tx, {
      id: 'string',
      card_id: 'string',
      card_name: 'string',
      status: 'string',
      side: 'string',
      amount: 'number',
      currency: 'string',
      type: 'string',
      masked_pan: 'string',
      merchant_name: 'string',
      original_amount: 'number',
      original_currency: 'string',
      decline_code: ['string', 'null'],
      transaction_created_at: 'string',
      transaction_updated_at: 'string',
    });
    assert.equal(tx.side, 'Debit');
    assert.equal(tx.amount, 10.05);
    const filtered = assertSuccess(await get(`/api/v1/cards/transactions?card_id=${cardId}&page=2&limit=1`));
    assert.deepEqual(filtered.pagination, { page: 2, limit: 1, total: 2, totalPages: 2, hasNext: false, hasPrev: true });
    assert.equal(filtered.data[0].card_id, cardId);
    const all = assertSuccess(await get('/api/v1/cards/transactions'));
    assert.equal(all.pagination.limit, 20);
  });

  test('4.13 OTP list: otps and cardInfo with the integer id, by UUID or by that integer', async () => {
    await api.t.admin.simulateOtp(cardId, 1234, 'Shop');
    const data = assertSuccess(await get(`/api/v1/cards/${cardId}/otps`));
    assertFields(data, { otps: 'array', cardInfo: 'object' });
    assertFields(data.cardInfo, { id: 'integer', nickname: 'string' });
    assert.equal(data.cardInfo.nickname, 'Ads');
    assertFields(data.otps[0], {
      id: 'string',
      code: 'string',
      amount: 'number',
      currency: 'string',
      masked_pan: 'string',
      card_name: 'string',
      created_at: 'string',
    });
    assert.equal(data.otps[0].amount, 12.34);
    const byNumber = assertSuccess(await get(`/api/v1/cards/${data.cardInfo.id}/otps`));
    assert.deepEqual(byNumber, data);
  });

  test('4.14 OTP request: message and cardInfo with the code from e-mail', async () => {
    const { code } = await api.t.admin.simulateOtpEmail(cardId);
    const r = await api.call('POST', `/api/v1/cards/${cardId}/otps/request`, { token: alice.token });
    const data = assertSuccess(r);
    assertFields(data, { message: 'string', cardInfo: 'object' });
    assertFields(data.cardInfo, { id: 'string', providerCardId: 'string', name: 'string', otp_code: 'string' });
    assert.equal(data.cardInfo.id, cardId);
    assert.equal(data.cardInfo.otp_code, code);
  });

  test('4.11 close: balance returned to the wallet with its transaction; null ids when empty', async () => {
    api.t.clock.advance(15 * 60 * 1000);
    const data = assertSuccess(await api.call('PATCH', `/api/v1/cards/${cardId}/close`, { token: alice.token }));
    assertFields(data, {
      card_id: 'string',
      balance_withdrawn: 'number',
      transaction_id: ['string', 'null'],
      invoice_id: ['integer', 'null'],
      new_wallet_balance: 'number',
    });
    assert.equal(data.balance_withdrawn, 90.05);
    assert.equal(typeof data.transaction_id, 'string');
    const wallet = assertSuccess(await get('/api/v1/wallet/balance'));
    assert.equal(wallet.balance, data.new_wallet_balance);

    const { bin, plan } = await catalogue(api.t, 'Online');
    const empty = assertSuccess(
      await api.call('POST', '/api/v1/cards', { token: alice.token, body: { bin_id: bin.id, name: 'Empty', planId: plan.id } }),
      201,
    );
    const closed = assertSuccess(await api.call('PATCH', `/api/v1/cards/${empty.id}/close`, { token: alice.token }));
    assert.deepEqual(
      { ...closed, new_wallet_balance: 0 },
      { card_id: empty.id, balance_withdrawn: 0, transaction_id: null, invoice_id: null, new_wallet_balance: 0 },
    );
    const card = assertSuccess(await get(`/api/v1/cards/${empty.id}`));
    assert.equal(card.status, 'closed');
  });

  test('4.15 wallet: balance and updated_at', async () => {
    const data = assertSuccess(await get('/api/v1/wallet/balance'));
    assertFields(data, { balance: 'number', updated_at: 'string' });
    assert.ok(isIsoTime(data.updated_at));
  });

  test('extension top-up quote: the seconds left of the cooldown a top-up started', async () => {
    const { bin, plan } = await catalogue(api.t, 'Online');
    const body = { bin_id: bin.id, name: 'Cooling', planId: plan.id };
    const card = assertSuccess(await api.call('POST', '/api/v1/cards', { token: alice.token, body }), 201);
    assertSuccess(await api.call('POST', `/api/v1/cards/${card.id}/topup`, { token: alice.token, body: { amount: 10 } }));
    const data = assertSuccess(
      await api.call('POST', `/api/v1/cards/${card.id}/topup/quote`, { token: alice.token, body: { amount: 10 } }),
    );
    assert.ok(data.topup_cooldown_seconds > 0 && data.topup_cooldown_seconds <= 120, String(data.topup_cooldown_seconds));
  });

  test('extension top-up quote: the refusal the top-up would give, word for word, and the most that would pass', async () => {
    const { bin, plan } = await catalogue(api.t, 'Online');
    const body = { bin_id: bin.id, name: 'Quoted', planId: plan.id };
    const card = assertSuccess(await api.call('POST', '/api/v1/cards', { token: alice.token, body }), 201);
    const quote = (amount: number) =>
      api.call('POST', `/api/v1/cards/${card.id}/topup/quote`, { token: alice.token, body: { amount } }).then((r) => assertSuccess(r));
    const topup = (amount: number) => api.call('POST', `/api/v1/cards/${card.id}/topup`, { token: alice.token, body: { amount } });
    // Over the plan's limit: the quote names the refusal and the most that fits; quoting starts no cooldown.
    const over = await quote(plan.limit / 100 + 5);
    assert.match(over.refusal, /^Topup would exceed card limit\. Current deposit: [\d.]+, Limit: [\d.]+, Available: [\d.]+$/);
    assert.ok(over.max_amount > 0 && over.max_amount <= plan.limit / 100, String(over.max_amount));
    const refused = await topup(plan.limit / 100 + 5);
    assert.equal(refused.body.message, over.refusal, 'the quote words it as the top-up does');
    // The refused top-up was an attempt (the cooldown runs); the quote says so with the seconds left, as the top-up would.
    const cooling = await quote(10);
    assert.match(cooling.refusal, /^Please wait \d+ seconds before topping up this card again$/);
    assert.ok(cooling.topup_cooldown_seconds > 0);
    assert.equal((await topup(10)).body.message, cooling.refusal);
    // A card no top-up was attempted on: quotes, passing or refused, never start its cooldown.
    const fresh = assertSuccess(await api.call('POST', '/api/v1/cards', { token: alice.token, body: { ...body, name: 'Fresh' } }), 201);
    const freshQuote = (amount: number) =>
      api.call('POST', `/api/v1/cards/${fresh.id}/topup/quote`, { token: alice.token, body: { amount } }).then((r) => assertSuccess(r));
    assert.equal((await freshQuote(10)).refusal, undefined);
    assert.match((await freshQuote(plan.limit / 100 + 5)).refusal, /^Topup would exceed card limit/);
    assertSuccess(await api.call('POST', `/api/v1/cards/${fresh.id}/topup`, { token: alice.token, body: { amount: 10 } }));
  });
});

describe('the extensions outside the spec', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.close());

  test('GET /livez answers without a token', async () => {
    const r = await api.call('GET', '/livez');
    assert.equal(assertSuccess(r).status, 'alive');
  });

  test('GET /api/v1/openapi.json is an OpenAPI 3.1 document of every route, generated from the request schemas', async () => {
    const r = await api.call('GET', '/api/v1/openapi.json');
    assert.equal(r.status, 200);
    assert.equal(r.body.openapi, '3.1.0');
    const paths = Object.keys(r.body.paths);
    for (const path of [
      '/api/v1/health',
      '/api/v1/bins',
      '/api/v1/card-plans',
      '/api/v1/cards',
      '/api/v1/cards/{id}',
      '/api/v1/cards/{id}/topup',
      '/api/v1/cards/{id}/withdraw',
      '/api/v1/cards/{id}/freeze',
      '/api/v1/cards/{id}/unfreeze',
      '/api/v1/cards/{id}/details',
      '/api/v1/cards/{id}/close',
      '/api/v1/cards/transactions',
      '/api/v1/cards/{id}/otps',
      '/api/v1/cards/{id}/otps/request',
      '/api/v1/wallet/balance',
      '/api/v1/cards/{id}/topup/quote',
      '/livez',
    ]) {
      assert.ok(paths.includes(path), `${path} documented`);
    }
    const topup = r.body.paths['/api/v1/cards/{id}/topup'].post;
    const schema = topup.requestBody.content['application/json'].schema;
    assert.deepEqual(schema.properties.amount.minimum, 5);
    assert.deepEqual(schema.properties.amount.maximum, 10000);
    assert.equal(schema.additionalProperties, false);
    assert.ok(topup.responses['200'].content['application/json'].schema.properties.data.properties.platform_fee_amount);
    assert.deepEqual(r.body.components.securitySchemes.bearerAuth, { type: 'http', scheme: 'bearer' });
    assert.deepEqual(r.body.paths['/api/v1/cards'].get.tags, ['extension']);
    assert.ok(topup.parameters.some((p: { name: string; in: string }) => p.name === 'Idempotency-Key' && p.in === 'header'));
    assert.equal(schema.properties.amount.multipleOf, undefined);
    assert.match(schema.properties.amount.description, /at most 2 decimal places/);
    assert.equal(topup.requestBody.required, true);
    assert.equal(r.body.paths['/api/v1/cards/{id}/freeze'].patch.requestBody.required, false, 'endpoints without a body take none');
    const limit = r.body.paths['/api/v1/cards/transactions'].get.parameters.find((p: { name: string }) => p.name === 'limit');
    assert.match(limit.description, /1 to 100; default 20/);
    assert.deepEqual(limit.schema, { type: 'integer', minimum: 1, maximum: 100 });
    const page = r.body.paths['/api/v1/cards/transactions'].get.parameters.find((p: { name: string }) => p.name === 'page');
    assert.equal(page.description, 'Page number, 1 to 1000000; default 1');
    assert.deepEqual(page.schema, { type: 'integer', minimum: 1, maximum: 1000000 });
    const key = topup.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key');
    assert.deepEqual(key.schema, { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]{1,255}$' });
    assert.match(key.description, /^Extension\. 1 to 255 visible ASCII characters, per user\. /);
    assert.equal(schema.properties.amount.description, 'USD, at most 2 decimal places (a third decimal is refused however small)');
  });
});
