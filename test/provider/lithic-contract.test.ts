import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { lithicThreeDsResponder } from '../../src/core/provider/lithic-events/three-ds.js';
import { LithicClient } from '../../src/core/provider/lithic/lithic-client.js';
import { lithicEnroll, lithicSimulate, lithicStatus } from '../../src/core/provider/lithic/lithic-operator.js';
import { LithicCardProvider } from '../../src/core/provider/lithic/lithic-provider.js';
import { lithicOpenApiSkip } from '../helpers/lithic-openapi.js';
import { type RunningPrism, startPrism } from '../helpers/prism.js';

// Every request the Lithic adapter sends is one Lithic's document allows (path, method, headers, body), and every
// answer it reads is one the document allows: Prism mocks the document with request validation on and --errors
// (a violation is answered 422 or 401, never mocked), and the recorder in front checks each exchange again with ajv.

const CARD = '7ef7d65c-9023-4da3-b113-3b8583fd7951';
const PATHS = [
  '/v1/cards',
  '/v1/cards/{card_token}',
  '/v1/responder_endpoints',
  '/v1/event_subscriptions',
  '/v1/event_subscriptions/{event_subscription_token}/secret',
  '/v1/auth_stream/secret',
  '/v1/simulate/authorize',
  '/v1/simulate/clearing',
  '/v1/simulate/void',
  '/v1/simulate/return',
  '/v1/three_ds_decisioning/challenge_response',
];

describe("the Lithic adapter against Lithic's document (Prism)", { skip: lithicOpenApiSkip() }, () => {
  let prism: RunningPrism;
  let client: LithicClient;
  let provider: LithicCardProvider;

  before(async () => {
    prism = await startPrism({ paths: PATHS });
    client = new LithicClient({ apiKey: 'test-api-key', baseUrl: prism.url, timeoutMs: 15_000, retries: 0 });
    provider = new LithicCardProvider(client);
  });
  after(() => prism?.stop());

  // The harness proves itself first: what the document does not allow is refused, and the recorder says so.
  const call = async (method: string, path: string, body?: unknown, key: string | null = 'test-key') => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (key !== null) headers.authorization = key;
    const response = await fetch(prism.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as Record<string, unknown>, exchange: prism.exchanges.at(-1)! };
  };

  test('the harness: a request the document allows is answered from its examples, with no violation', async (t) => {
    t.diagnostic(`Prism started in ${prism.startMs} ms`);
    const { status, body, exchange } = await call('POST', '/v1/cards', { type: 'VIRTUAL', memo: 'Groceries' });
    assert.equal(status, 200);
    assert.equal(typeof body.token, 'string');
    assert.deepEqual(exchange.violations, []);
  });

  test('the harness: a body the document refuses is answered 422 and recorded as a violation by Prism and by ajv', async () => {
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

  test('the harness: a state the document does not have in PATCH /v1/cards/{card_token} is refused', async () => {
    const { status, exchange } = await call('PATCH', '/v1/cards/7ef7d65c-9023-4da3-b113-3b8583fd7951', { state: 'FROZEN' });
    assert.equal(status, 422);
    assert.notDeepEqual(exchange.violations, []);
  });

  test('the harness: a request without the API key is refused 401 as the security scheme says', async () => {
    const { status, exchange } = await call('GET', '/v1/cards/7ef7d65c-9023-4da3-b113-3b8583fd7951', undefined, null);
    assert.equal(status, 401);
    assert.ok(
      exchange.violations.some((v) => v.includes('security')),
      exchange.violations.join('\n'),
    );
  });

  /** Runs `act`, then checks it sent `expected` requests (method and path template) and none was a violation. */
  const exchanged = async <T>(act: () => Promise<T>, expected: string[]): Promise<T> => {
    const from = prism.exchanges.length;
    const result = await act();
    const made = prism.exchanges.slice(from);
    assert.deepEqual(
      made.map((e) => `${e.method} ${e.url.split('?')[0]}`),
      expected,
    );
    assert.deepEqual(
      made.flatMap((e) => e.violations),
      [],
    );
    for (const e of made) assert.ok(e.status < 300, `${e.method} ${e.url}: ${e.status}`);
    return result;
  };

  test('each card type is created by POST /v1/cards with its type, the nickname as memo and an Idempotency-Key', async () => {
    for (const [type, lithicType] of [
      ['multi_use', 'VIRTUAL'],
      ['single_use', 'SINGLE_USE'],
      ['merchant_locked', 'MERCHANT_LOCKED'],
    ] as const) {
      const reference = randomUUID();
      const issued = await exchanged(
        () => provider.issue({ bin: '411111', country: 'US', name: 'Groceries', type, reference }),
        ['POST /v1/cards'],
      );
      const sent = prism.exchanges.at(-1)!;
      assert.deepEqual(sent.requestBody, { type: lithicType, memo: 'Groceries', state: 'OPEN' });
      assert.equal(sent.headers['idempotency-key'], reference);
      assert.equal(issued.providerCardId, (sent.responseBody as { token: string }).token);
      const answered = sent.responseBody as { pan?: string; cvv?: string };
      assert.ok(answered.pan && !issued.pan.includes(answered.pan), 'the number Lithic sent stays at Lithic');
    }
  });

  test('freeze, unfreeze and close are PATCH /v1/cards/{card_token} with PAUSED, OPEN and CLOSED', async () => {
    await exchanged(() => provider.freeze(CARD), [`PATCH /v1/cards/${CARD}`]);
    assert.deepEqual(prism.exchanges.at(-1)!.requestBody, { state: 'PAUSED' });
    await exchanged(() => provider.unfreeze(CARD), [`PATCH /v1/cards/${CARD}`]);
    assert.deepEqual(prism.exchanges.at(-1)!.requestBody, { state: 'OPEN' });
    await exchanged(() => provider.terminate(CARD), [`PATCH /v1/cards/${CARD}`]);
    assert.deepEqual(prism.exchanges.at(-1)!.requestBody, { state: 'CLOSED' });
  });

  test("the card's details are read from GET /v1/cards/{card_token}", async () => {
    const details = await exchanged(() => provider.readDetails(CARD), [`GET /v1/cards/${CARD}`]);
    const answer = prism.exchanges.at(-1)!.responseBody as { pan: string; cvv: string };
    assert.equal(details.pan, answer.pan);
    assert.equal(details.cvv, answer.cvv);
    assert.match(details.exp, /^\d\d\/\d\d$/);
  });

  test('a creation a crash left pending is asked about by the same POST /v1/cards and Idempotency-Key; a card by GET', async () => {
    const reference = randomUUID();
    const issued = await exchanged(
      () => provider.reissue({ bin: '411111', country: 'US', name: 'Groceries', type: 'single_use', reference }),
      ['POST /v1/cards'],
    );
    const sent = prism.exchanges.at(-1)!;
    assert.deepEqual(sent.requestBody, { type: 'SINGLE_USE', memo: 'Groceries', state: 'OPEN' });
    assert.equal(sent.headers['idempotency-key'], reference);
    assert.equal(issued.providerCardId, (sent.responseBody as { token: string }).token);
    const state = await exchanged(() => provider.stateOf(CARD), [`GET /v1/cards/${CARD}`]);
    assert.ok(['open', 'paused', 'closed'].includes(state));
  });

  test('provider lithic status: GET /v1/responder_endpoints?type=AUTH_STREAM_ACCESS', async () => {
    const status = await exchanged(() => lithicStatus(client), ['GET /v1/responder_endpoints']);
    assert.equal(status.reachable, true);
    assert.equal(status.keyValid, true);
  });

  test('provider lithic status with a key Lithic refuses: reachable, key not valid', async () => {
    const keyless = new LithicClient({ apiKey: '', baseUrl: prism.url, timeoutMs: 15_000, retries: 0 });
    const from = prism.exchanges.length;
    const status = await lithicStatus(keyless);
    assert.deepEqual([status.reachable, status.keyValid], [true, false]);
    assert.equal(prism.exchanges[from]!.status, 401);
  });

  test('provider lithic enroll: the responder endpoint, an event subscription and both secrets', async () => {
    const enrolment = await exchanged(
      () => lithicEnroll(client, 'https://bot.example.com/'),
      [
        'POST /v1/responder_endpoints',
        'POST /v1/event_subscriptions',
        'GET /v1/auth_stream/secret',
        `GET /v1/event_subscriptions/${'ep_1srOrx2ZWZBpBUvZwXKQmoEYga1'}/secret`,
      ],
    );
    assert.equal(enrolment.asaUrl, 'https://bot.example.com/provider/lithic/asa');
    assert.equal(enrolment.eventsUrl, 'https://bot.example.com/provider/lithic/events');
    assert.ok(enrolment.asaSecret && enrolment.webhookSecret);
  });

  test('provider lithic simulate authorize, clear, void and return', async () => {
    const token = await exchanged(
      () => lithicSimulate(client, { kind: 'authorize', pan: '4111111289144142', amount: 1999, descriptor: 'STEAM', mcc: '5816' }),
      ['POST /v1/simulate/authorize'],
    );
    assert.ok(token);
    await exchanged(() => lithicSimulate(client, { kind: 'clear', transactionToken: token }), ['POST /v1/simulate/clearing']);
    await exchanged(() => lithicSimulate(client, { kind: 'void', transactionToken: token, amount: 100 }), ['POST /v1/simulate/void']);
    await exchanged(
      () => lithicSimulate(client, { kind: 'return', pan: '4111111289144142', amount: 500, descriptor: 'STEAM' }),
      ['POST /v1/simulate/return'],
    );
  });

  test("a cardholder's 3-D Secure answer: POST /v1/three_ds_decisioning/challenge_response", async () => {
    const responder = lithicThreeDsResponder({ apiUrl: prism.url, apiKey: 'test-api-key' });
    const token = randomUUID();
    await exchanged(() => responder.respond(token, 'APPROVE'), ['POST /v1/three_ds_decisioning/challenge_response']);
    assert.deepEqual(prism.exchanges.at(-1)!.requestBody, { token, challenge_response: 'APPROVE' });
  });
});
