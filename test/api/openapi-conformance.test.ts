import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { catalogue, newCard, newCustomer, type Customer } from '../helpers/core.js';
import { startTestApi, type TestApi } from '../helpers/http.js';
import { createConformance } from '../helpers/openapi-conformance.js';

// The OpenAPI document tells the truth: a standard validator (ajv, JSON Schema 2020-12 as OpenAPI 3.1
// uses) accepts every reply the server gives, and refuses what the server refuses.

type Doc = {
  paths: Record<
    string,
    Record<string, { parameters?: { name: string; in: string; schema: object }[]; requestBody?: any; responses: Record<string, unknown> }>
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

  test('amounts: no multipleOf (a standard validator refuses 19.4 by it); the 2 decimals are in the description', () => {
    for (const path of ['/api/v1/cards/{id}/topup', '/api/v1/cards/{id}/topup/quote', '/api/v1/cards/{id}/withdraw']) {
      const schema = doc.paths[path]!.post!.requestBody.content['application/json'].schema;
      assert.equal(schema.properties.amount.multipleOf, undefined, path);
      assert.match(schema.properties.amount.description, /at most 2 decimal places/);
      const validate = ajv.compile(schema);
      for (const amount of [19.4, 9.77, 11.11, 10.05, 5])
        assert.ok(validate({ amount }), `${path} ${amount}: ${JSON.stringify(validate.errors)}`);
    }
  });

  test('Idempotency-Key: documented with the pattern the server enforces (1 to 255 visible ASCII characters)', () => {
    const posts = operations().filter((o) => o.method === 'post');
    assert.ok(posts.length >= 5);
    for (const { path } of posts) {
      const validate = ajv.compile(param(path, 'post', 'Idempotency-Key').schema);
      assert.ok(validate('order-42:retry#1'), path);
      for (const bad of ['', 'with space', 'clé', 'x'.repeat(256)]) assert.ok(!validate(bad), `${path} accepts ${JSON.stringify(bad)}`);
    }
  });

  test('page and limit: documented as integers with their ranges, as query parameters are', () => {
    const check = (name: string, good: string[], bad: string[]) => {
      const schema = param('/api/v1/cards/transactions', 'get', name).schema as { type: string; minimum: number; maximum: number };
      assert.equal(schema.type, 'integer');
      const validate = coercing.compile(schema);
      for (const v of good) assert.ok(validate(v), `${name}=${v}`);
      for (const v of bad) assert.ok(!validate(v), `${name}=${v} documented as valid`);
    };
    check('page', ['1', '1000000'], ['0', '-1', '1000001', '1.5', 'abc']);
    check('limit', ['1', '100'], ['0', '101', '2.5']);
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
    api.t.provider.failNext('terminate', 'provider unavailable');
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
