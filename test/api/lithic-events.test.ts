import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, type TestContext, test } from 'node:test';
import { Registry } from 'prom-client';
import { LITHIC_ASA_PATH } from '../../src/api/routes/lithic-asa.js';
import { LITHIC_EVENTS_PATH } from '../../src/api/routes/lithic-events.js';
import { countUnknownEvents } from '../../src/core/provider/lithic-events/events.js';
import { createLogger } from '../../src/infra/logger.js';
import { sendThreeDsAnswers, startThreeDsAnswers, type ThreeDsAnswer } from '../../src/core/provider/lithic-events/three-ds.js';
import { coreOn, type Dialect, dialects } from '../core/dialects.js';
import { lithicOpenApiSkip } from '../helpers/lithic-openapi.js';
import { asaSignature, cardBalanceOf, type LithicApi, startLithicApi, webhookHeaders } from '../helpers/lithic-api.js';
import { asaRequest, cardTransactionUpdated, type TransactionEvent, webhookPayload } from '../helpers/lithic-payloads.js';

// Issue 34, section 3: `POST /provider/lithic/events` over HTTP, every payload built from and checked against
// Lithic's document, signed as Standard Webhooks.

async function served(ctx: TestContext, dialect: Dialect, registry?: Registry) {
  const api = await startLithicApi({ registry }, await coreOn(dialect));
  ctx.after(() => api.close());
  return api;
}

async function deliver(api: LithicApi, payload: unknown, id?: string) {
  const body = JSON.stringify(payload);
  return api.post(LITHIC_EVENTS_PATH, body, webhookHeaders(body, id));
}

const db = (api: LithicApi) => api.t.database.db;
const holdOf = (api: LithicApi, token: string) =>
  db(api).selectFrom('card_authorizations').selectAll().where('provider_transaction_id', '=', token).executeTakeFirst();
const outboxKinds = async (api: LithicApi) =>
  (await db(api).selectFrom('outbox').select(['kind', 'payload']).orderBy('seq').execute()).map((r) => [r.kind, JSON.parse(r.payload)]);

/** A purchase approved through the ASA route: its transaction token. */
async function authorized(api: LithicApi, amount: number): Promise<string> {
  const request = asaRequest({ cardToken: api.cardToken, amount, created: api.t.clock.now() });
  const answer = await api.post(LITHIC_ASA_PATH, JSON.stringify(request), { 'x-lithic-hmac': asaSignature(request) });
  assert.equal(answer.body.result, 'APPROVED');
  return request.token as string;
}

/** `card_transaction.updated` for the purchase `token` after `events` (a second apart from now), still pending. */
function transaction(api: LithicApi, token: string, events: Omit<TransactionEvent, 'created'>[]) {
  const start = api.t.clock.now().getTime();
  return cardTransactionUpdated(
    { token, cardToken: api.cardToken, amount: events.at(-1)!.amount, status: 'PENDING', created: new Date(start) },
    events.map((e, i) => ({ ...e, created: new Date(start + i * 1_000) })),
  );
}

for (const dialect of dialects()) {
  describe(`POST /provider/lithic/events (${dialect})`, { skip: lithicOpenApiSkip() }, () => {
    test('unsigned, forged or stale deliveries are refused 401 and not stored', async (ctx) => {
      const api = await served(ctx, dialect);
      const body = JSON.stringify({ event_type: 'card.created', card_token: randomUUID() });
      assert.equal((await api.post(LITHIC_EVENTS_PATH, body, {})).status, 401);
      const headers = webhookHeaders(body);
      assert.equal((await api.post(LITHIC_EVENTS_PATH, body.replace('card.created', 'card.updated'), headers)).status, 401);
      const old = webhookHeaders(body, undefined, new Date(Date.now() - 10 * 60_000));
      assert.equal((await api.post(LITHIC_EVENTS_PATH, body, old)).status, 401);
      assert.equal((await db(api).selectFrom('lithic_events').select('webhook_id').execute()).length, 0);
    });

    test('a clearing settles the hold for the amount cleared, once however often it is delivered; the alert as today', async (ctx) => {
      const api = await served(ctx, dialect);
      const before = await cardBalanceOf(api);
      const token = await authorized(api, 2_000);
      const cleared = transaction(api, token, [
        { type: 'AUTHORIZATION', amount: 2_000 },
        { type: 'CLEARING', amount: 1_800 },
      ]);
      const id = `msg_${randomUUID()}`;
      const first = await deliver(api, cleared, id);
      assert.deepEqual([first.status, first.body.status, first.body.duplicate], [200, 'handled', false]);
      const replay = await deliver(api, cleared, id);
      assert.deepEqual([replay.status, replay.body.duplicate], [200, true]);
      // The same events again under another webhook-id (Lithic's next update of the transaction): applied once.
      await deliver(api, cleared);
      const hold = await holdOf(api, token);
      assert.deepEqual([hold?.status, Number(hold?.cleared_amount)], ['cleared', 1_800]);
      assert.equal(await cardBalanceOf(api), before - 1_800);
      const alerts = (await outboxKinds(api)).filter(([kind, p]) => kind === 'card_transaction' && p.status === 'Approved');
      assert.equal(alerts.length, 1);
      assert.equal(alerts[0]![1].amount, 1_800);
      const ledger = await api.t.admin.checkLedger();
      assert.deepEqual([ledger.differences, ledger.total], [[], 0]);
    });

    test('reordered: a clearing delivered before its authorization holds and settles; the late authorization changes nothing', async (ctx) => {
      const api = await served(ctx, dialect);
      const before = await cardBalanceOf(api);
      const token = randomUUID();
      const auth = { type: 'AUTHORIZATION' as const, amount: 700, token: randomUUID() };
      const clearing = { type: 'CLEARING' as const, amount: 700, token: randomUUID() };
      await deliver(api, transaction(api, token, [auth, clearing]));
      await deliver(api, transaction(api, token, [auth]));
      assert.equal((await holdOf(api, token))?.status, 'cleared');
      assert.equal(await cardBalanceOf(api), before - 700);
    });

    test('a void releases the hold; a return credits the card once', async (ctx) => {
      const api = await served(ctx, dialect);
      const before = await cardBalanceOf(api);
      const token = await authorized(api, 900);
      await deliver(
        api,
        transaction(api, token, [
          { type: 'AUTHORIZATION', amount: 900 },
          { type: 'AUTHORIZATION_REVERSAL', amount: 900 },
        ]),
      );
      assert.equal((await holdOf(api, token))?.status, 'voided');
      assert.equal(await cardBalanceOf(api), before);
      const refund = transaction(api, randomUUID(), [{ type: 'RETURN', amount: 450 }]);
      await deliver(api, refund);
      await deliver(api, refund);
      assert.equal(await cardBalanceOf(api), before + 450);
      const credits = (await outboxKinds(api)).filter(([kind, p]) => kind === 'card_transaction' && p.side === 'Credit');
      assert.equal(credits.length, 1);
      const ledger = await api.t.admin.checkLedger();
      assert.deepEqual([ledger.differences, ledger.total], [[], 0]);
    });

    test('a partial reversal releases part of the hold, once; the clearing then settles the rest', async (ctx) => {
      const api = await served(ctx, dialect);
      const before = await cardBalanceOf(api);
      const token = await authorized(api, 5_000);
      const auth = { type: 'AUTHORIZATION' as const, amount: 5_000, token: randomUUID() };
      const reversal = { type: 'AUTHORIZATION_REVERSAL' as const, amount: 2_000, token: randomUUID() };
      await deliver(api, transaction(api, token, [auth, reversal]));
      await deliver(api, transaction(api, token, [auth, reversal])); // Lithic's next update: the same events again
      const held = await holdOf(api, token);
      assert.deepEqual([held?.status, Number(held?.amount)], ['pending', 3_000]);
      assert.equal(await cardBalanceOf(api), before - 3_000);
      await deliver(api, transaction(api, token, [auth, reversal, { type: 'CLEARING', amount: 3_000, token: randomUUID() }]));
      const cleared = await holdOf(api, token);
      assert.deepEqual([cleared?.status, Number(cleared?.cleared_amount)], ['cleared', 3_000]);
      assert.equal(await cardBalanceOf(api), before - 3_000);
      const ledger = await api.t.admin.checkLedger();
      assert.deepEqual([ledger.differences, ledger.total], [[], 0]);
    });

    test('a partial reversal across a hold and its increment releases its amount once, even applied again after a crash', async (ctx) => {
      const api = await served(ctx, dialect);
      const before = await cardBalanceOf(api);
      const token = randomUUID();
      const firstEvent = randomUUID();
      const incrementEvent = randomUUID();
      const ask = async (eventToken: string, amount: number) => {
        const request = asaRequest({ cardToken: api.cardToken, amount, created: api.t.clock.now(), token }, { event_token: eventToken });
        const answer = await api.post(LITHIC_ASA_PATH, JSON.stringify(request), { 'x-lithic-hmac': asaSignature(request) });
        assert.equal(answer.body.result, 'APPROVED');
      };
      await ask(firstEvent, 5_000);
      await ask(incrementEvent, 2_000);
      assert.equal(await cardBalanceOf(api), before - 7_000);
      const events: Omit<TransactionEvent, 'created'>[] = [
        { type: 'AUTHORIZATION', amount: 5_000, token: firstEvent },
        { type: 'AUTHORIZATION', amount: 2_000, token: incrementEvent },
      ];
      for (const [reversed, left] of [
        [2_000, 5_000], // the increment, whole
        [3_000, 2_000], // part of the first hold
      ] as const) {
        const reversal = { type: 'AUTHORIZATION_REVERSAL' as const, amount: reversed, token: randomUUID() };
        events.push(reversal);
        await deliver(api, transaction(api, token, events));
        // The crash: applied, but not yet marked applied; Lithic delivers the transaction again.
        await db(api).deleteFrom('lithic_transaction_events').where('event_token', '=', reversal.token).execute();
        await deliver(api, transaction(api, token, events));
        assert.equal(await cardBalanceOf(api), before - left, `after reversing ${reversed}`);
      }
      const ledger = await api.t.admin.checkLedger();
      assert.deepEqual([ledger.differences, ledger.total], [[], 0]);
    });

    test('an advice lowering a hold and its increment, applied in part before a crash, leaves what it says once delivered again', async (ctx) => {
      const api = await served(ctx, dialect);
      const before = await cardBalanceOf(api);
      const token = randomUUID();
      const [firstEvent, incrementEvent] = [randomUUID(), randomUUID()];
      for (const [eventToken, amount] of [
        [firstEvent, 5_000],
        [incrementEvent, 2_000],
      ] as const) {
        const request = asaRequest({ cardToken: api.cardToken, amount, created: api.t.clock.now(), token }, { event_token: eventToken });
        await api.post(LITHIC_ASA_PATH, JSON.stringify(request), { 'x-lithic-hmac': asaSignature(request) });
      }
      const advice = { type: 'AUTHORIZATION_ADVICE' as const, amount: 1_000, token: randomUUID() };
      // The advice's first step (the increment released, under its token) done, then the crash.
      await api.t.core.voidAuthorization(`${token}/${incrementEvent}`, { amount: 2_000, key: advice.token });
      assert.equal(await cardBalanceOf(api), before - 5_000);
      const events = [
        { type: 'AUTHORIZATION' as const, amount: 5_000, token: firstEvent },
        { type: 'AUTHORIZATION' as const, amount: 2_000, token: incrementEvent },
        advice,
      ];
      await deliver(api, transaction(api, token, events));
      assert.equal(await cardBalanceOf(api), before - 1_000, 'held: what the advice says');
      await db(api).deleteFrom('lithic_transaction_events').where('event_token', '=', advice.token).execute();
      await deliver(api, transaction(api, token, events));
      assert.equal(await cardBalanceOf(api), before - 1_000, 'and once');
    });

    test('a clearing after the whole hold was reversed is charged late, from the balance', async (ctx) => {
      const api = await served(ctx, dialect);
      const before = await cardBalanceOf(api);
      const token = await authorized(api, 500);
      const auth = { type: 'AUTHORIZATION' as const, amount: 500, token: randomUUID() };
      const reversal = { type: 'AUTHORIZATION_REVERSAL' as const, amount: 500, token: randomUUID() };
      await deliver(api, transaction(api, token, [auth, reversal]));
      assert.equal(await cardBalanceOf(api), before);
      await deliver(api, transaction(api, token, [auth, reversal, { type: 'CLEARING', amount: 500, token: randomUUID() }]));
      assert.equal(await cardBalanceOf(api), before - 500);
      assert.equal((await holdOf(api, token))?.status, 'cleared');
      const ledger = await api.t.admin.checkLedger();
      assert.deepEqual([ledger.differences, ledger.total], [[], 0]);
    });

    test("an advice changes the pending amount: a fuel pump's $1 raised to $45 and cleared; another lowered", async (ctx) => {
      const api = await served(ctx, dialect);
      const before = await cardBalanceOf(api);
      const fuel = await authorized(api, 100);
      const auth = { type: 'AUTHORIZATION' as const, amount: 100, token: randomUUID() };
      const advice = { type: 'AUTHORIZATION_ADVICE' as const, amount: 4_500, token: randomUUID() };
      await deliver(api, transaction(api, fuel, [auth, advice]));
      assert.equal(await cardBalanceOf(api), before - 4_500, 'held: the advice raised it');
      await deliver(api, transaction(api, fuel, [auth, advice, { type: 'CLEARING', amount: 4_500, token: randomUUID() }]));
      assert.equal(await cardBalanceOf(api), before - 4_500, 'cleared: nothing more, nothing given back');
      assert.equal((await holdOf(api, fuel))?.status, 'cleared');

      const hotel = await authorized(api, 3_000);
      const lowered = [
        { type: 'AUTHORIZATION' as const, amount: 3_000, token: randomUUID() },
        { type: 'AUTHORIZATION_ADVICE' as const, amount: 1_200, token: randomUUID() },
      ];
      await deliver(api, transaction(api, hotel, lowered));
      assert.equal(await cardBalanceOf(api), before - 4_500 - 1_200);
      assert.equal(Number((await holdOf(api, hotel))?.amount), 1_200);
      const ledger = await api.t.admin.checkLedger();
      assert.deepEqual([ledger.differences, ledger.total], [[], 0]);
    });

    test('a 3-D Secure challenge is put to the cardholder in chat, and the answer goes back to Lithic once', async (ctx) => {
      const api = await served(ctx, dialect);
      const threeDsToken = randomUUID();
      const now = api.t.clock.now();
      const payload = webhookPayload('three_ds_authentication.challenge', {
        event_type: 'three_ds_authentication.challenge',
        authentication_object: {
          token: threeDsToken,
          card_token: api.cardToken,
          account_type: null,
          authentication_result: 'PENDING_CHALLENGE',
          card_expiry_check: 'MATCH',
          cardholder: {},
          channel: 'BROWSER',
          created: now.toISOString(),
          merchant: { name: 'STEAM', country: 'USA', id: '12345', mcc: '5816', risk_indicator: {} },
          message_category: 'PAYMENT_AUTHENTICATION',
          three_ds_requestor_challenge_indicator: 'NO_PREFERENCE',
          transaction: {
            amount: 4_210,
            cardholder_amount: 4_210,
            currency: 'USD',
            currency_exponent: 2,
            date_time: now.toISOString(),
            type: 'GOODS_SERVICE_PURCHASE',
          },
        },
        challenge: {
          challenge_method_type: 'OUT_OF_BAND',
          start_time: now.toISOString(),
          expiry_time: new Date(now.getTime() + 120_000).toISOString(),
        },
      });
      const id = `msg_${randomUUID()}`;
      await deliver(api, payload, id);
      await deliver(api, payload, id);
      await deliver(api, payload);
      const challenges = await api.t.core.listChallenges(api.alice.caller, api.cardId);
      assert.deepEqual(
        challenges.map((c) => [c.amount, c.merchantName, c.status]),
        [[4_210, 'STEAM', 'pending']],
      );
      assert.ok((await outboxKinds(api)).some(([kind, p]) => kind === 'challenge' && p.challengeId === challenges[0]!.id));

      const sent: [string, ThreeDsAnswer][] = [];
      const responder = { respond: async (token: string, answer: ThreeDsAnswer) => void sent.push([token, answer]) };
      const deps = { db: db(api), clock: api.t.clock };
      assert.equal(await sendThreeDsAnswers(deps, responder), 0);
      await api.t.core.answerChallenge(api.alice.caller, challenges[0]!.id, 'approve');
      // The background job sends it (its first tick runs at once).
      const loop = startThreeDsAnswers(deps, responder, createLogger('silent'));
      for (let i = 0; i < 200 && sent.length === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
      await loop.stop();
      assert.equal(await sendThreeDsAnswers(deps, responder), 0);
      assert.deepEqual(sent, [[threeDsToken, 'APPROVE']]);
    });

    test("a digital wallet's tokenization code is pushed to chat as an OTP", async (ctx) => {
      const api = await served(ctx, dialect);
      const payload = webhookPayload('tokenization.two_factor_authentication_code', {
        event_type: 'tokenization.two_factor_authentication_code',
        account_token: randomUUID(),
        activation_method: { type: 'TEXT_TO_CARDHOLDER_NUMBER', value: '+15555555555' },
        authentication_code: '482913',
        card_token: api.cardToken,
        created: api.t.clock.now().toISOString(),
        tokenization_token: randomUUID(),
      });
      assert.equal((await deliver(api, payload)).body.status, 'handled');
      const otps = (await outboxKinds(api)).filter(([kind]) => kind === 'otp');
      assert.deepEqual(
        otps.map(([, p]) => [p.cardId, p.code, p.merchantName]),
        [[api.cardId, '482913', 'Digital wallet']],
      );
    });

    test('an event of a type not handled is acknowledged and counted, in the database and in Prometheus', async (ctx) => {
      const registry = new Registry();
      const api = await served(ctx, dialect, registry);
      const payload = { event_type: 'card.shipped', card_token: randomUUID() };
      const id = `msg_${randomUUID()}`;
      assert.deepEqual((await deliver(api, payload, id)).body, { received: true, status: 'unknown', duplicate: false });
      await deliver(api, payload, id);
      await deliver(api, payload);
      assert.deepEqual(await countUnknownEvents(db(api)), { 'card.shipped': 2 });
      assert.match(await registry.metrics(), /lithic_events_unknown_total\{event_type="card.shipped"\} 2/);
    });
  });
}
