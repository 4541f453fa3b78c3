import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MalformedJsonError, parseJsonBody } from '../../src/api/json-body.js';
import { catalogue, newCustomer, type Customer } from '../helpers/core.js';
import { assertFields, assertSuccess, startTestApi, type TestApi } from '../helpers/http.js';

// Amounts are checked as written in the JSON text, not as the double JSON.parse rounds them to.

const DECIMALS_ITEM = { code: 'custom', message: 'Amount must have at most 2 decimal places', path: ['amount'] };
const HIDDEN_THIRD_DECIMALS = [
  '5.0000000000000000001',
  '5.00000000000000000010e0',
  '5.001',
  '500.1e-2',
  '50000000000000000000001e-22',
  '9.9999999999999999999',
];
const WHOLE_CENTS: [string, number][] = [
  ['5', 5],
  ['5.000', 5],
  ['5.0000000000', 5],
  ['5e0', 5],
  ['500e-2', 5],
  ['0.5e1', 5],
  ['5.10', 5.1],
  ['51E-1', 5.1],
  ['19.40', 19.4],
];

describe('parseJsonBody reads numbers as written', () => {
  test('a nonzero digit past the second decimal survives parsing as a visible third decimal', () => {
    assert.deepEqual(parseJsonBody('{"amount":5.0000000000000000001}'), { amount: 5.005 });
    assert.deepEqual(parseJsonBody('{"amount":-1.23e-1}'), { amount: -0.125 });
    assert.deepEqual(parseJsonBody('{"amount":1e-999999999}'), { amount: 0.005 });
    assert.deepEqual(parseJsonBody('[1.0000000000000000001, 2]'), [1.005, 2]);
  });

  test('a key named twice (parsers disagree on which wins) or a prototype key is malformed JSON', () => {
    for (const text of ['{"amount":5,"amount":5000}', '{"__proto__":{"amount":5}}', '{"a":{"constructor":{}}}', '{"amount":', 'NaN']) {
      assert.throws(() => parseJsonBody(text), MalformedJsonError, text);
    }
    assert.equal(parseJsonBody(''), undefined);
  });

  test('whole cents, strings and huge exponents are parsed as JSON.parse parses them', () => {
    for (const [literal, value] of WHOLE_CENTS) assert.deepEqual(parseJsonBody(`{"amount":${literal}}`), { amount: value });
    assert.deepEqual(parseJsonBody('{"name":"v1.0001 \\"5.0001\\" 1e-9","amount":1e400}'), {
      name: 'v1.0001 "5.0001" 1e-9',
      amount: Infinity,
    });
  });
});

describe("a third decimal hidden past a double's precision is refused", () => {
  let api: TestApi;
  let alice: Customer;
  let cardId: string;
  before(async () => {
    api = await startTestApi({ settings: { topupCooldownSeconds: 1, withdrawCooldownSeconds: 1 } });
    alice = await newCustomer(api.t, 10_000_000);
    const { bin, plans } = await catalogue(api.t);
    cardId = (await api.t.core.createCard(alice.caller, { bin_id: bin.id, planId: plans[2]!.id, name: 'Big' })).id;
    await api.t.core.topup(alice.caller, cardId, { amount: 100_000 });
  });
  after(() => api.close());

  const post = (path: string, body: string) => {
    api.t.clock.advance(2000);
    return api.call('POST', `/api/v1/cards/${cardId}${path}`, { token: alice.token, body });
  };

  for (const path of ['/topup', '/topup/quote', '/withdraw']) {
    test(`${path}: a nonzero digit past the second decimal, however far, is the usual validation error`, async () => {
      const ledger = await api.t.admin.checkLedger();
      for (const literal of HIDDEN_THIRD_DECIMALS) {
        const r = await post(path, `{"amount":${literal}}`);
        assert.equal(r.status, 400, `${literal}: ${r.text}`);
        assertFields(r.body, { success: 'boolean', message: 'string', error: 'array', timestamp: 'string' });
        assert.equal(r.body.message, 'Invalid input data');
        assert.deepEqual(r.body.error, [DECIMALS_ITEM], literal);
      }
      assert.deepEqual(await api.t.admin.checkLedger(), ledger);
    });

    test(`${path}: trailing zeros and exponents landing on whole cents are the same amount as before`, async () => {
      for (const [literal, value] of WHOLE_CENTS) {
        const data = assertSuccess(await post(path, `{"amount":${literal}}`));
        const amount = data.amount ?? data.amount_withdrawn ?? data.total_charged - data.platform_fee_amount;
        assert.equal(Math.round(amount * 100), Math.round(value * 100), literal);
      }
    });
  }

  test('bounds compare as written: just under the minimum is too small, just over the maximum too big', async () => {
    const under = await post('/topup', '{"amount":4.9999999999999999999}');
    assert.deepEqual(
      under.body.error.map((i: { code: string }) => i.code),
      ['too_small', 'custom'],
    );
    const over = await post('/topup', '{"amount":10000.0000000000000001}');
    assert.deepEqual(
      over.body.error.map((i: { code: string }) => i.code),
      ['too_big', 'custom'],
    );
  });

  test('a plan id written with a hidden fraction is not an integer', async () => {
    const { bin, plan } = await catalogue(api.t);
    const r = await api.call('POST', '/api/v1/cards', {
      token: alice.token,
      body: `{"bin_id":"${bin.id}","name":"x","planId":${plan.id}.0000000000000000001}`,
    });
    assert.equal(r.status, 400, r.text);
    assert.deepEqual(
      r.body.error.map((i: { message: string }) => i.message),
      ['Plan ID must be an integer'],
    );
  });
});
