import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { IDEMPOTENCY_KEY_LENGTH, IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_RULE } from '../../src/api/idempotency.js';
import { AT_MOST_TWO_DECIMALS } from '../../src/core/ledger/money.js';
import { PAGE_NUMBER, PAGE_SIZE_MIN } from '../../src/core/rules/schemas.js';
import { defaultCoreSettings } from '../../src/core/settings.js';
import { catalogue, newCard, newCustomer, type Customer } from '../helpers/core.js';
import { startTestApi, type TestApi } from '../helpers/http.js';
import { createConformance } from '../helpers/openapi-conformance.js';

// The OpenAPI document tells the truth: a standard validator (ajv, JSON Schema 2020-12 as OpenAPI 3.1
// uses) accepts every reply the server gives, and refuses what the server refuses.

type Doc = {
  paths: Record<
    string,
    Record<
      string,
      {
        parameters?: { name: string; in: string; schema: object; description?: string }[];
        requestBody?: any;
        responses: Record<string, unknown>;
      }
    >
  >;
};

describe('the OpenAPI document tells the truth', () => {
  let api: TestApi;
  let doc: Doc;
  let alice: Customer;
  const ajv = new Ajv2020({ strict: false });
  const coercing = new Ajv2020({ strict: false, coerceTypes: true });

  before(async () => {
    api = await startTestApi({
      bodyLimit: 2048,
      server: { limits: { perTokenPerMinute: 1000, perAddressPerMinute: 1000, authFailuresPerAddress: 5 } },
    });
    alice = await newCustomer(api.t, 1_000_000);
    doc = (await api.call('GET', '/api/v1/openapi.json')).body as Doc;
  });
  after(() => api.close());

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ path, method, operation })),
    );
  const param = (path: string, method: string, name: string) => doc.paths[path]![method]!.parameters!.find((p) => p.name === name)!;

  test('a transaction’s status: each one the server gives (a hold, its void, a decline) is named in the description', async () => {
    const customer = await newCustomer(api.t, 100_000);
    const card = await newCard(api.t, customer);
    await api.t.core.topup(customer.caller, card.id, { amount: 5_000 });
    await api.t.admin.simulatePurchase(card.id, 1_000, 'Hotel', { hold: true });
    const voided = await api.t.admin.simulatePurchase(card.id, 1_000, 'Taxi', { hold: true });
    await api.t.admin.simulateVoid(voided.transactionId);
    await api.t.admin.simulatePurchase(card.id, 100_000, 'Yacht');
    const page = await api.call('GET', '/api/v1/cards/transactions', { token: customer.token });
    const given = new Set((page.body.data.data as { status: string }[]).map((t) => t.status));
    for (const status of ['Pending', 'Reversed', 'Declined']) assert.ok(given.has(status), `${status} among ${[...given]}`);
    const { schema } = (doc.paths['/api/v1/cards/transactions']!.get!.responses['200'] as any).content['application/json'];
    const { description } = schema.properties.data.properties.data.items.properties.status;
    for (const status of given) assert.ok(description.includes(`\`${status}\``), `${status}: ${description}`);
    assert.match(description, /held purchase/);
    assert.match(description, /void/);
  });

  test('amounts: no multipleOf (a standard validator refuses 19.4 by it); the 2 decimals the server enforces are in the description', async () => {
    const { id } = await newCard(api.t, alice);
    for (const path of ['/api/v1/cards/{id}/topup', '/api/v1/cards/{id}/topup/quote', '/api/v1/cards/{id}/withdraw']) {
      const schema = doc.paths[path]!.post!.requestBody.content['application/json'].schema;
      assert.equal(schema.properties.amount.multipleOf, undefined, path);
      assert.equal(schema.properties.amount.description, `USD, ${AT_MOST_TWO_DECIMALS} (a third decimal is refused however small)`);
      const validate = ajv.compile(schema);
      for (const amount of [19.4, 9.77, 11.11, 10.05, 5])
        assert.ok(validate({ amount }), `${path} ${amount}: ${JSON.stringify(validate.errors)}`);
      // What JSON Schema cannot say on binary floats, the description does; the server refuses it in the same words.
      const refused = await api.call('POST', path.replace('{id}', id), { token: alice.token, body: { amount: 10.001 } });
      assert.equal(refused.status, 400, path);
      assert.deepEqual(
        refused.body.error.map((i: { message: string }) => i.message),
        [`Amount must have ${AT_MOST_TWO_DECIMALS}`],
      );
    }
    // Every money field of every reply says so too.
    const moneyFields = ['balance', 'wallet_balance', 'total_charged', 'platform_fee_amount', 'new_card_balance', 'amount_withdrawn'];
    const described: string[] = [];
    JSON.stringify(doc, (key, value) => {
      if (moneyFields.includes(key) && value?.type === 'number') described.push(value.description);
      return value;
    });
    assert.ok(described.length >= moneyFields.length);
    for (const description of described) assert.equal(description, `USD, ${AT_MOST_TWO_DECIMALS}`);
  });

  test("Idempotency-Key: the document's pattern and lengths are the server's own, and agree with it key by key", async () => {
    const posts = operations().filter((o) => o.method === 'post');
    assert.ok(posts.length >= 5);
    for (const { path } of posts) {
      assert.deepEqual(param(path, 'post', 'Idempotency-Key').schema, {
        type: 'string',
        minLength: IDEMPOTENCY_KEY_LENGTH.min,
        maxLength: IDEMPOTENCY_KEY_LENGTH.max,
        pattern: IDEMPOTENCY_KEY_PATTERN.source,
      });
    }
    assert.match(
      param(posts[0]!.path, 'post', 'Idempotency-Key').description ?? '',
      new RegExp(`^Extension\\. ${IDEMPOTENCY_KEY_RULE}, per user\\.`),
    );

    // The same keys, put to the document (a standard validator) and to the server (the quote checks a key and keeps nothing).
    const validate = ajv.compile(param('/api/v1/cards/{id}/topup/quote', 'post', 'Idempotency-Key').schema);
    const { id } = await newCard(api.t, alice);
    const visible = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('');
    const accepted = ['a', 'order-42:retry#1', '!', '~', '"quoted"\\back{slash}', visible, 'x'.repeat(IDEMPOTENCY_KEY_LENGTH.max)];
    const refused = ['', 'with space', 'tab\there', 'clé', 'ünïcode', 'x'.repeat(IDEMPOTENCY_KEY_LENGTH.max + 1), 'y'.repeat(1000)];
    for (const [keys, expected] of [
      [accepted, true],
      [refused, false],
    ] as const) {
      for (const key of keys) {
        const r = await api.call('POST', `/api/v1/cards/${id}/topup/quote`, {
          token: alice.token,
          body: { amount: 10 },
          headers: { 'idempotency-key': key },
        });
        const label = JSON.stringify(key.length > 40 ? `${key.slice(0, 20)}…(${key.length})` : key);
        if (expected) assert.equal(r.status, 200, `the server refuses ${label}: ${r.text}`);
        else {
          assert.equal(r.status, 400, `the server accepts ${label}`);
          assert.deepEqual(r.body.error, [
            { code: 'invalid_format', message: `Idempotency-Key must be ${IDEMPOTENCY_KEY_RULE}`, path: ['Idempotency-Key'] },
          ]);
        }
        assert.equal(validate(key), expected, `the document ${expected ? 'refuses' : 'accepts'} ${label}`);
      }
    }
  });

  /** The server's bounds for a query parameter, read from its refusals: the items' minimum and maximum. */
  async function serverBounds(server: TestApi, name: string, token: string): Promise<{ min: number; max: number }> {
    const items = async (value: string) => {
      const r = await server.call('GET', `/api/v1/cards/transactions?${name}=${value}`, { token });
      assert.equal(r.status, 400, `${name}=${value}: ${r.text}`);
      return r.body.error as { code: string; minimum?: number; maximum?: number }[];
    };
    const [small] = await items('0');
    const [big] = await items('99999999999');
    assert.equal(small?.code, 'too_small');
    assert.equal(big?.code, 'too_big');
    const bounds = { min: small!.minimum!, max: big!.maximum! };
    // The bounds themselves are accepted, one beyond them refused.
    for (const value of [bounds.min, bounds.max]) {
      const r = await server.call('GET', `/api/v1/cards/transactions?${name}=${value}`, { token });
      assert.equal(r.status, 200, `${name}=${value}: ${r.text}`);
    }
    await items(String(bounds.max + 1));
    if (bounds.min > 0) await items(String(bounds.min - 1));
    return bounds;
  }

  test("page and limit: documented as integers with the server's own bounds, as query parameters are", async () => {
    const check = async (server: TestApi, served: Doc, name: string, token: string, expected: { min: number; max: number }) => {
      const { schema } = served.paths['/api/v1/cards/transactions']!.get!.parameters!.find((p) => p.name === name)! as {
        schema: { type: string; minimum: number; maximum: number };
      };
      assert.equal(schema.type, 'integer');
      const bounds = await serverBounds(server, name, token);
      assert.deepEqual({ min: schema.minimum, max: schema.maximum }, bounds, `${name}: the document's bounds are the server's`);
      assert.deepEqual(bounds, expected, name);
      const validate = coercing.compile(schema);
      for (const v of [bounds.min, bounds.max]) assert.ok(validate(String(v)), `${name}=${v}`);
      for (const v of [bounds.min - 1, bounds.max + 1, -1, 1.5, 'abc']) assert.ok(!validate(String(v)), `${name}=${v} documented as valid`);
    };
    await check(api, doc, 'page', alice.token, PAGE_NUMBER);
    await check(api, doc, 'limit', alice.token, { min: PAGE_SIZE_MIN, max: defaultCoreSettings.pageSizeMax });

    // An operator's page size: the document follows the setting the server enforces.
    const other = await startTestApi({ settings: { pageSizeMax: 37, pageSizeDefault: 7 } });
    try {
      const carol = await newCustomer(other.t, 100, 'Carol');
      const served = (await other.call('GET', '/api/v1/openapi.json')).body as Doc;
      await check(other, served, 'limit', carol.token, { min: PAGE_SIZE_MIN, max: 37 });
      await check(other, served, 'page', carol.token, PAGE_NUMBER);
      const limit = served.paths['/api/v1/cards/transactions']!.get!.parameters!.find((p) => p.name === 'limit') as { description: string };
      assert.equal(limit.description, 'Items per page, 1 to 37; default 7');
    } finally {
      await other.close();
    }
  });

  test('every status the server may answer is documented: 413, 414, 415 and 429 too', () => {
    for (const { path, method, operation } of operations()) {
      const statuses = Object.keys(operation.responses);
      const expected =
        path === '/livez'
          ? ['200', '414', '429']
          : path === '/readyz'
            ? ['200', '414', '429', '503']
            : ['400', '401', '404', '414', '429', '500'];
      if (method === 'post' || method === 'patch') expected.push('413', '415');
      for (const status of expected) assert.ok(statuses.includes(status), `${method.toUpperCase()} ${path} documents ${status}`);
    }
  });

  test("every endpoint's replies, successes and refusals alike, validate against the served document", async () => {
    const bob = await newCustomer(api.t, 100, 'Bob');
    const { bin, plan } = await catalogue(api.t);
    const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}, token = alice.token) =>
      api.call(method, path, { token, body, headers });
    const statuses = new Set<number>();
    const seen = async (promise: ReturnType<typeof call>) => statuses.add((await promise).status);

    for (const path of ['/api/v1/health', '/api/v1/bins', '/api/v1/card-plans', '/api/v1/cards', '/api/v1/wallet/balance', '/livez'])
      await seen(call('GET', path));
    const created = await call(
      'POST',
      '/api/v1/cards',
      { bin_id: bin.id, name: 'Ads', planId: plan.id },
      { 'idempotency-key': 'create-1' },
    );
    await seen(call('POST', '/api/v1/cards', { bin_id: bin.id, name: 'Ads', planId: plan.id }, { 'idempotency-key': 'create-1' }));
    const id = created.body.data.id as string;
    for (const path of [
      `/api/v1/cards/${id}`,
      `/api/v1/cards/${id}/details`,
      '/api/v1/cards/transactions?page=1&limit=100',
      `/api/v1/cards/transactions?card_id=${id}`,
    ]) {
      await seen(call('GET', path));
    }
    await seen(call('POST', `/api/v1/cards/${id}/topup/quote`, { amount: 19.4 }));
    await seen(call('POST', `/api/v1/cards/${id}/topup`, { amount: 19.4 }, { 'idempotency-key': 'topup-1' }));
    await seen(call('POST', `/api/v1/cards/${id}/topup`, { amount: 10 })); // 429 cooldown
    await seen(call('POST', `/api/v1/cards/${id}/withdraw`, { amount: 9.77 }));
    await seen(call('PATCH', `/api/v1/cards/${id}/freeze`));
    await seen(call('PATCH', `/api/v1/cards/${id}/freeze`)); // 409
    await seen(call('PATCH', `/api/v1/cards/${id}/unfreeze`, {}));
    await api.t.admin.simulateOtp(id, 1111, 'Shop');
    await seen(call('GET', `/api/v1/cards/${id}/otps`));
    await api.t.admin.simulateOtpEmail(id);
    await seen(call('POST', `/api/v1/cards/${id}/otps/request`));
    await seen(call('POST', `/api/v1/cards/${id}/otps/request`)); // 404 in `error`
    await seen(call('POST', '/api/v1/cards', { bin_id: bin.id, name: 'x', planId: plan.id }, {}, bob.token)); // 422
    await seen(call('POST', `/api/v1/cards/${id}/topup`, { amount: 1.001 })); // 400 validation
    await seen(call('POST', `/api/v1/cards/${id}/topup`, '{"amount":')); // 400 malformed
    await seen(call('GET', '/api/v1/cards/transactions?limit=0')); // 400
    await seen(call('GET', '/api/v1/cards/%zz')); // 400 invalid URL
    await seen(call('GET', `/api/v1/cards/${'a'.repeat(150)}`)); // 414
    await seen(call('POST', `/api/v1/cards/${id}/topup`, JSON.stringify({ amount: 10, pad: 'x'.repeat(4096) }))); // 413
    await seen(call('POST', `/api/v1/cards/${id}/topup`, '{"amount":10}', { 'content-type': 'text/plain' })); // 415
    await seen(call('GET', '/api/v1/cards/00000000-0000-4000-8000-000000000000')); // 404
    await seen(call('GET', '/api/v1/nothing')); // 404 Route not found
    api.t.sandbox.failNext('terminate', 'provider unavailable');
    api.t.clock.advance(900_000);
    await seen(call('PATCH', `/api/v1/cards/${(await newCard(api.t, alice)).id}/close`)); // 502
    api.t.clock.advance(900_000);
    await seen(call('PATCH', `/api/v1/cards/${id}/close`));
    for (let i = 0; i < 5; i++) await seen(call('GET', '/api/v1/health', undefined, {}, `wrong-${i}`)); // 401
    await seen(call('GET', '/api/v1/health')); // 429: too many failed authentications

    for (const status of [200, 201, 400, 401, 404, 409, 413, 414, 415, 422, 429, 502])
      assert.ok(statuses.has(status), `no ${status} was exercised`);
    const conformance = createConformance(
      (await api.app.inject({ method: 'GET', url: '/api/v1/openapi.json', remoteAddress: '192.0.2.1' })).json(),
    );
    assert.deepEqual(
      api.exchanges.flatMap((exchange) => conformance.check(exchange)),
      [],
    );
  });
});
