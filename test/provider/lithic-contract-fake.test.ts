import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { type FakeLithic, startFakeLithic } from '../helpers/fake-lithic.js';
import { lithicOpenApiSkip, lithicValidator } from '../helpers/lithic-openapi.js';
import { asaRequest, cardTransactionUpdated, threeDsChallenge, tokenizationCode, webhookPayload } from '../helpers/lithic-payloads.js';

// The fake Lithic keeps Lithic's behaviour (card states, simulations calling the responder and sending events,
// both signed) and only ever answers what Lithic's document allows.

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

describe('the fake Lithic', { skip: lithicOpenApiSkip() }, () => {
  let fake: FakeLithic;
  let receiver: Server;
  const received: Received[] = [];
  let asaResult = 'APPROVED';

  before(async () => {
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        received.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString() });
        const asa = request.url === '/asa';
        response.writeHead(200, { 'content-type': 'application/json' }).end(asa ? JSON.stringify({ result: asaResult }) : '');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(receiver.address() as { port: number }).port}`;
    fake = await startFakeLithic({ asaUrl: `${base}/asa`, eventsUrl: `${base}/events` });
  });
  after(async () => {
    await fake?.stop();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  const call = async (method: string, path: string, body?: unknown, key = fake.apiKey) => {
    const response = await fetch(fake.url + path, {
      method,
      headers: { authorization: key, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const json = text === '' ? undefined : JSON.parse(text);
    assert.deepEqual(lithicValidator().response(method, path, response.status, json), [], `${method} ${path} ${response.status}`);
    return { status: response.status, body: json };
  };
  const newCard = async (type = 'VIRTUAL') =>
    (await call('POST', '/v1/cards', { type, memo: 'Groceries' })).body as { token: string; pan: string };
  const lastEvent = () => JSON.parse(received.filter((r) => r.path === '/events').at(-1)!.body);

  test('cards: made, read with their PAN, paused, opened and closed for good; each answer valid', async () => {
    const card = await newCard();
    assert.match(card.pan, /^\d{16}$/);
    assert.equal((await call('GET', `/v1/cards/${card.token}`)).body.pan, card.pan);
    assert.equal((await call('PATCH', `/v1/cards/${card.token}`, { state: 'PAUSED' })).body.state, 'PAUSED');
    assert.equal((await call('PATCH', `/v1/cards/${card.token}`, { state: 'OPEN' })).body.state, 'OPEN');
    assert.equal((await call('PATCH', `/v1/cards/${card.token}`, { state: 'CLOSED' })).body.state, 'CLOSED');
    assert.equal((await call('PATCH', `/v1/cards/${card.token}`, { state: 'OPEN' })).status, 422);
    assert.equal((await call('GET', `/v1/cards?memo=Groceries`)).body.data.length >= 1, true);
    assert.deepEqual(fake.problems, []);
  });

  test('the same Idempotency-Key makes one card', async () => {
    const once = async () => {
      const response = await fetch(`${fake.url}/v1/cards`, {
        method: 'POST',
        headers: { authorization: fake.apiKey, 'content-type': 'application/json', 'idempotency-key': 'card-42' },
        body: JSON.stringify({ type: 'VIRTUAL' }),
      });
      return ((await response.json()) as { token: string }).token;
    };
    assert.equal(await once(), await once());
  });

  test('without the API key, 401; a body the document refuses, 422 and a problem recorded', async () => {
    assert.equal((await call('GET', '/v1/cards', undefined, 'wrong')).status, 401);
    assert.equal((await call('POST', '/v1/cards', { type: 'GIFT' })).status, 422);
    assert.equal(fake.problems.length, 1);
    assert.match(fake.problems[0]!, /type must be equal to one of the allowed values/);
    fake.problems.length = 0;
  });

  test('simulate authorize asks the responder with X-Lithic-HMAC over the canonical JSON, then sends card_transaction.updated signed', async () => {
    const card = await newCard();
    const { body } = await call('POST', '/v1/simulate/authorize', { pan: card.pan, amount: 1999, descriptor: 'STEAM', mcc: '5816' });
    const asa = received.filter((r) => r.path === '/asa').at(-1)!;
    assert.equal(asa.headers['x-lithic-hmac'], createHmac('sha256', fake.asaSecret).update(asa.body).digest('base64'));
    const request = JSON.parse(asa.body);
    assert.deepEqual(lithicValidator().webhook('card_authorization.approval_request', request), []);
    assert.equal(request.card.token, card.token);
    assert.equal(request.token, body.token);
    const delivery = received.filter((r) => r.path === '/events').at(-1)!;
    const event = new Webhook(fake.webhookSecret).verify(delivery.body, delivery.headers as Record<string, string>) as Record<
      string,
      unknown
    >;
    assert.equal(event.event_type, 'card_transaction.updated');
    assert.equal(event.status, 'PENDING');
    await call('POST', '/v1/simulate/clearing', { token: body.token });
    assert.equal(lastEvent().status, 'SETTLED');
    assert.deepEqual(
      lastEvent().events.map((e: { type: string }) => e.type),
      ['AUTHORIZATION', 'CLEARING'],
    );
    assert.deepEqual(fake.problems, []);
  });

  test("a responder's decline is Lithic's; a paused card is declined without asking; void and return are sent", async () => {
    const card = await newCard();
    asaResult = 'INSUFFICIENT_FUNDS';
    const declined = await call('POST', '/v1/simulate/authorize', { pan: card.pan, amount: 100, descriptor: 'SHOP' });
    asaResult = 'APPROVED';
    assert.equal(fake.transactions.get(declined.body.token)!.result, 'INSUFFICIENT_FUNDS');
    assert.equal(lastEvent().status, 'DECLINED');
    const approved = await call('POST', '/v1/simulate/authorize', { pan: card.pan, amount: 100, descriptor: 'SHOP' });
    await call('POST', '/v1/simulate/void', { token: approved.body.token });
    assert.equal(lastEvent().status, 'VOIDED');
    await call('POST', '/v1/simulate/return', { pan: card.pan, amount: 250, descriptor: 'SHOP' });
    assert.equal(lastEvent().events[0].type, 'RETURN');
    await call('PATCH', `/v1/cards/${card.token}`, { state: 'PAUSED' });
    const asked = received.filter((r) => r.path === '/asa').length;
    const paused = await call('POST', '/v1/simulate/authorize', { pan: card.pan, amount: 100, descriptor: 'SHOP' });
    assert.equal(fake.transactions.get(paused.body.token)!.result, 'CARD_PAUSED');
    assert.equal(received.filter((r) => r.path === '/asa').length, asked);
    assert.deepEqual(fake.problems, []);
  });

  test('a 3-D Secure simulation sends the challenge event; the challenge response is taken once', async () => {
    const card = await newCard();
    const { body } = await call('POST', '/v1/three_ds_authentication/simulate', {
      pan: card.pan,
      merchant: { id: 'OODKZAPJVN4YS7O', country: 'USA', mcc: '5816', name: 'STEAM CHALLENGE' },
      transaction: { amount: 4210, currency: 'USD' },
    });
    const event = lastEvent();
    assert.equal(event.event_type, 'three_ds_authentication.challenge');
    assert.equal(event.authentication_object.token, body.token);
    assert.equal(
      (await call('POST', '/v1/three_ds_decisioning/challenge_response', { token: body.token, challenge_response: 'APPROVE' })).status,
      200,
    );
    assert.equal(
      (await call('POST', '/v1/three_ds_decisioning/challenge_response', { token: body.token, challenge_response: 'APPROVE' })).status,
      422,
    );
    assert.deepEqual(fake.challengeResponses, [{ token: body.token, challenge_response: 'APPROVE' }]);
    assert.deepEqual(fake.problems, []);
  });

  test('a tokenization simulation sends the wallet code under both event types, each valid against its webhook', async () => {
    const card = (await call('GET', `/v1/cards/${(await newCard()).token}`)).body as {
      pan: string;
      cvv: string;
      exp_month: string;
      exp_year: string;
    };
    const from = received.length;
    const { status } = await call('POST', '/v1/simulate/tokenizations', {
      pan: card.pan,
      cvv: card.cvv,
      expiration_date: `${card.exp_month}/${card.exp_year.slice(-2)}`,
      tokenization_source: 'GOOGLE',
    });
    assert.equal(status, 201);
    const events = received.slice(from).map((r) => JSON.parse(r.body));
    assert.deepEqual(
      events.map((e) => e.event_type),
      ['tokenization.two_factor_authentication_code', 'digital_wallet.tokenization_two_factor_authentication_code'],
    );
    assert.equal(events[0].authentication_code, fake.walletCodes.at(-1)!.code);
    assert.deepEqual(fake.problems, []);
  });

  test('enrolment: the responder endpoint, an event subscription and both secrets', async () => {
    assert.deepEqual(
      (await call('POST', '/v1/responder_endpoints', { type: 'AUTH_STREAM_ACCESS', url: 'https://bot.example/provider/lithic/asa' })).body,
      {
        enrolled: true,
      },
    );
    assert.equal(
      (await call('GET', '/v1/responder_endpoints?type=AUTH_STREAM_ACCESS')).body.url,
      'https://bot.example/provider/lithic/asa',
    );
    assert.equal((await call('GET', '/v1/auth_stream/secret')).body.secret, fake.asaSecret);
    const subscription = await call('POST', '/v1/event_subscriptions', { url: 'https://bot.example/provider/lithic/events' });
    assert.equal(subscription.status, 201);
    const secret = await call('GET', `/v1/event_subscriptions/${subscription.body.token}/secret`);
    assert.match(secret.body.secret, /^whsec_/);
    assert.deepEqual(fake.problems, []);
  });
});

// What Lithic sends our routes in tests is built from its document's webhook schemas and checked against them
// with ajv: a payload that drifts from Lithic's (a field renamed, a value the document does not list) is refused.

describe("test payloads are Lithic's own", { skip: lithicOpenApiSkip() }, () => {
  const cardToken = randomUUID();

  test('an ASA request is a valid card_authorization.approval_request carrying the card, amount and merchant', () => {
    const request = asaRequest({ cardToken, amount: 1234, descriptor: 'STEAM', mcc: '5816' });
    assert.deepEqual(lithicValidator().webhook('card_authorization.approval_request', request), []);
    assert.equal((request.card as { token: string }).token, cardToken);
    assert.equal((request.amounts as { cardholder: { amount: number } }).cardholder.amount, 1234);
    assert.equal((request.merchant as { mcc: string }).mcc, '5816');
  });

  test('card_transaction.updated carries its events, authorization then clearing', () => {
    const token = randomUUID();
    const update = cardTransactionUpdated({ cardToken, amount: 500, token, status: 'SETTLED', settled: 500 }, [
      { type: 'AUTHORIZATION', amount: 500 },
      { type: 'CLEARING', amount: 500 },
    ]);
    assert.deepEqual(lithicValidator().webhook('card_transaction.updated', update), []);
    assert.deepEqual(
      (update.events as { type: string }[]).map((e) => e.type),
      ['AUTHORIZATION', 'CLEARING'],
    );
  });

  test('three_ds_authentication.challenge and the tokenization code are valid against their webhooks', () => {
    const challenge = threeDsChallenge({ cardToken, amount: 4210, merchant: 'STEAM', expiry: new Date(Date.now() + 300_000) });
    assert.deepEqual(lithicValidator().webhook('three_ds_authentication.challenge', challenge), []);
    const code = tokenizationCode({ cardToken, authenticationCode: '123456' });
    assert.deepEqual(lithicValidator().webhook('tokenization.two_factor_authentication_code', code), []);
  });

  test('a payload that drifts from the document is refused when built', () => {
    assert.throws(
      () => asaRequest({ cardToken, amount: 100 }, { status: 'AUTHORISED' }),
      /status must be equal to one of the allowed values/,
    );
    assert.throws(() => asaRequest({ cardToken, amount: 1.5 }), /amount must be integer/);
    assert.throws(
      () => webhookPayload('card_transaction.updated', { event_type: 'card_transaction.created' }),
      /must be equal to constant/,
    );
    assert.throws(
      () => tokenizationCode({ cardToken, authenticationCode: '1' }, { activation_method: { type: 'CARRIER_PIGEON', value: 'x' } }),
      /activation_method\/type must be equal to one of the allowed values/,
    );
  });
});
