import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { lithicOpenApiSkip } from '../helpers/lithic-openapi.js';
import { type RunningPrism, startPrism } from '../helpers/prism.js';

// The contract harness proves itself before it proves the adapter: Prism mocks Lithic's document with its
// request validation on, so what the document does not allow is refused, and the recorder says so.

describe('Prism as a validating mock of Lithic', { skip: lithicOpenApiSkip() }, () => {
  let prism: RunningPrism;
  before(async () => {
    prism = await startPrism({ paths: ['/v1/cards', '/v1/cards/{card_token}'] });
  });
  after(() => prism?.stop());

  const call = async (method: string, path: string, body?: unknown, key: string | null = 'test-key') => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (key !== null) headers.authorization = key;
    const response = await fetch(prism.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown>, exchange: prism.exchanges.at(-1)! };
  };

  test('a request the document allows is answered from its examples, with no violation', async (t) => {
    t.diagnostic(`Prism started in ${prism.startMs} ms`);
    const { status, body, exchange } = await call('POST', '/v1/cards', { type: 'VIRTUAL', memo: 'Groceries' });
    assert.equal(status, 200);
    assert.equal(typeof body.token, 'string');
    assert.deepEqual(exchange.violations, []);
  });

  test('a body the document refuses is answered 422 and recorded as a violation by Prism and by ajv', async () => {
    const { status, exchange } = await call('POST', '/v1/cards', { type: 'PREPAID_GIFT' });
    assert.equal(status, 422);
    assert.ok(
      exchange.violations.some((v) => v.startsWith('Prism: request.body.type')),
      exchange.violations.join('\n'),
    );
    assert.ok(
      exchange.violations.some((v) => v.startsWith('ajv: POST /v1/cards request/type')),
      exchange.violations.join('\n'),
    );
  });

  test('a state the document does not have in PATCH /v1/cards/{card_token} is refused', async () => {
    const { status, exchange } = await call('PATCH', '/v1/cards/7ef7d65c-9023-4da3-b113-3b8583fd7951', { state: 'FROZEN' });
    assert.equal(status, 422);
    assert.notDeepEqual(exchange.violations, []);
  });

  test('a request without the API key is refused 401 as the security scheme says', async () => {
    const { status, exchange } = await call('GET', '/v1/cards/7ef7d65c-9023-4da3-b113-3b8583fd7951', undefined, null);
    assert.equal(status, 401);
    assert.ok(
      exchange.violations.some((v) => v.includes('security')),
      exchange.violations.join('\n'),
    );
  });
});
