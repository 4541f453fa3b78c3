import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, type TestContext, test } from 'node:test';
import { canonicalJson, LITHIC_ASA_PATH } from '../../src/api/routes/lithic-asa.js';
import { ASA_RESULT_OF, type AsaRequest, decideAsa } from '../../src/core/provider/lithic-events/asa.js';
import { DECLINE_CODES } from '../../src/core/authorization/declines.js';
import { coreOn, type Dialect, dialects } from '../core/dialects.js';
import { lithicOpenApiSkip, lithicValidator } from '../helpers/lithic-openapi.js';
import { ASA_SECRET, asaSignature, cardBalanceOf, type LithicApi, startLithicApi, webhookHeaders } from '../helpers/lithic-api.js';
import { asaRequest, type Purchase } from '../helpers/lithic-payloads.js';

// Issue 34, section 2: `POST /provider/lithic/asa` over HTTP, its requests built from Lithic's document and every
// answer checked against the document's `asa-response`.

async function served(ctx: TestContext, dialect: Dialect, options: Parameters<typeof startLithicApi>[0] = {}) {
  const api = await startLithicApi(options, await coreOn(dialect));
  ctx.after(() => api.close());
  return api;
}

/** What a test changes in the ASA request: the purchase, Lithic's status for it, and the event's token (incremental ones). */
type AsaOptions = Partial<Purchase> & { status?: string; eventToken?: string };

async function ask(api: LithicApi, o: AsaOptions = {}, sign: (body: unknown) => string | undefined = (b) => asaSignature(b)) {
  const { status, eventToken, ...purchase } = o;
  const body = asaRequest(
    { cardToken: api.cardToken, amount: 1_250, created: api.t.clock.now(), ...purchase },
    { ...(status === undefined ? {} : { status }), ...(eventToken === undefined ? {} : { event_token: eventToken }) },
  );
  const signature = sign(body);
  const response = await api.post(LITHIC_ASA_PATH, JSON.stringify(body), signature === undefined ? {} : { 'x-lithic-hmac': signature });
  if (response.status === 200)
    assert.deepEqual(lithicValidator().schema('asa-response', response.body), [], 'the answer is an asa-response');
  return { ...response, request: body };
}

for (const dialect of dialects()) {
  describe(`POST /provider/lithic/asa (${dialect})`, { skip: lithicOpenApiSkip() }, () => {
    test('a signed authorization is decided by the engine, held, and answered APPROVED with the balance', async (ctx) => {
      const api = await served(ctx, dialect);
      const before = await cardBalanceOf(api);
      const { status, body, request } = await ask(api, { amount: 1_250, descriptor: 'STEAM', mcc: '5816', country: 'DEU' });
      assert.equal(status, 200);
      assert.deepEqual(body, { result: 'APPROVED', token: request.token, balance: { amount: before - 1_250, available: before - 1_250 } });
      const hold = await api.t.database.db
        .selectFrom('card_authorizations')
        .selectAll()
        .where('provider_transaction_id', '=', request.token as string)
        .executeTakeFirstOrThrow();
      assert.deepEqual(
        [hold.status, Number(hold.amount), hold.merchant_name, hold.merchant_mcc, hold.merchant_country],
        ['pending', 1_250, 'STEAM', '5816', 'DE'],
      );
    });

    test('asked again (Lithic retries once), the first answer is given again and nothing more is held', async (ctx) => {
      const api = await served(ctx, dialect);
      const token = randomUUID();
      const first = await ask(api, { token });
      const again = await ask(api, { token });
      assert.deepEqual(again.body, first.body);
      assert.equal((await api.t.database.db.selectFrom('card_authorizations').select('id').execute()).length, 1);
    });

    test('unsigned, forged, signed with another secret, or stale: refused 401, nothing decided', async (ctx) => {
      const api = await served(ctx, dialect);
      assert.equal((await ask(api, {}, () => undefined)).status, 401);
      assert.equal((await ask(api, {}, () => 'AAAA')).status, 401);
      assert.equal((await ask(api, {}, (b) => asaSignature(b, 'another-secret'))).status, 401);
      const body = asaRequest({ cardToken: api.cardToken, amount: 1_250, created: api.t.clock.now() });
      const forged = await api.post(LITHIC_ASA_PATH, JSON.stringify({ ...body, amount: 1 }), { 'x-lithic-hmac': asaSignature(body) });
      assert.equal(forged.status, 401);
      const stale = new Date(api.t.clock.now().getTime() - 6 * 60_000);
      assert.equal((await ask(api, { created: stale })).status, 401);
      const future = new Date(api.t.clock.now().getTime() + 6 * 60_000);
      assert.equal((await ask(api, { created: future })).status, 401);
      assert.equal((await api.t.database.db.selectFrom('card_authorizations').select('id').execute()).length, 0);
    });

    test('a signature over the body exactly as sent is taken too', async (ctx) => {
      const api = await served(ctx, dialect);
      const { createHmac } = await import('node:crypto');
      const text = JSON.stringify(
        asaRequest({ cardToken: api.cardToken, amount: 100, created: api.t.clock.now(), descriptor: 'CAFÉ' }),
        null,
        1,
      );
      const response = await api.post(LITHIC_ASA_PATH, text, {
        'x-lithic-hmac': createHmac('sha256', 'asa-secret-for-tests').update(text).digest('base64'),
      });
      assert.equal(response.body.result, 'APPROVED');
    });

    test("a signature over Python's canonical JSON holds when the body has a float written as Python writes it (1.0), and DEL", async (ctx) => {
      const api = await served(ctx, dialect);
      const { createHmac } = await import('node:crypto');
      const body = {
        ...asaRequest({ cardToken: api.cardToken, amount: 100, created: api.t.clock.now(), descriptor: 'CAF\u00c9\u007f' }),
        conversion_rate: 1.5,
      };
      const float = (json: string) =>
        json.replace('"conversion_rate":1.5', '"conversion_rate":1.0').replace('"conversion_rate": 1.5', '"conversion_rate": 1.0');
      const sent = float(JSON.stringify(body, null, 1));
      // Python: json.dumps(body, sort_keys=True, separators=(',', ':')): 1.0 stays 1.0, É as \u00c9, DEL as \u007f.
      const python = float(canonicalJson(body));
      assert.ok(python.includes('"conversion_rate":1.0') && python.includes('CAF\\u00c9\\u007f'), python);
      const response = await api.post(LITHIC_ASA_PATH, sent, {
        'x-lithic-hmac': createHmac('sha256', 'asa-secret-for-tests').update(python).digest('base64'),
      });
      assert.equal(response.body.result, 'APPROVED');
    });

    test("Lithic's newer Standard Webhooks headers, signed with the ASA secret, are taken; forged ones are not", async (ctx) => {
      const api = await served(ctx, dialect);
      const text = JSON.stringify(asaRequest({ cardToken: api.cardToken, amount: 100, created: api.t.clock.now() }));
      const secret = Buffer.from(ASA_SECRET);
      assert.equal((await api.post(LITHIC_ASA_PATH, text, webhookHeaders(text, undefined, new Date(), secret))).body.result, 'APPROVED');
      const forged = webhookHeaders(text, undefined, new Date(), Buffer.from('another'));
      assert.equal((await api.post(LITHIC_ASA_PATH, text, forged)).status, 401);
      // Under these headers their timestamp says how old the request is, not its `created` (the transaction's first).
      const old = JSON.stringify(asaRequest({ cardToken: api.cardToken, amount: 100, created: new Date(Date.now() - 3_600_000) }));
      assert.equal((await api.post(LITHIC_ASA_PATH, old, webhookHeaders(old, undefined, new Date(), secret))).body.result, 'APPROVED');
      const late = webhookHeaders(text, undefined, new Date(Date.now() - 10 * 60_000), secret);
      assert.equal((await api.post(LITHIC_ASA_PATH, text, late)).status, 401);
    });

    test('declines map to Lithic results: insufficient funds, frozen card, controls; every decline code has one', async (ctx) => {
      const api = await served(ctx, dialect);
      assert.equal((await ask(api, { amount: 50_000_000 })).body.result, 'INSUFFICIENT_FUNDS');
      await api.t.database.db.updateTable('cards').set({ per_purchase_limit: 500 }).where('id', '=', api.cardId).execute();
      assert.equal((await ask(api, { amount: 600 })).body.result, 'VELOCITY_EXCEEDED');
      await api.t.database.db
        .updateTable('cards')
        .set({ per_purchase_limit: null, blocked_categories: '["gambling"]' })
        .where('id', '=', api.cardId)
        .execute();
      const gambling = await ask(api, { amount: 100, mcc: '7995' });
      assert.equal(gambling.body.result, 'UNAUTHORIZED_MERCHANT');
      await api.t.core.freeze(api.alice.caller, api.cardId);
      assert.equal((await ask(api, { amount: 100 })).body.result, 'CARD_PAUSED');
      assert.deepEqual(
        DECLINE_CODES.filter((code) => ASA_RESULT_OF[code] === undefined),
        [],
      );
    });

    test('a card token we never issued is declined SUSPECTED_FRAUD', async (ctx) => {
      const api = await served(ctx, dialect);
      assert.equal((await ask(api, { cardToken: randomUUID() })).body.result, 'SUSPECTED_FRAUD');
    });

    test('a balance inquiry is approved with the balance; a merchant credit is approved without moving money', async (ctx) => {
      const api = await served(ctx, dialect);
      const before = await cardBalanceOf(api);
      assert.deepEqual((await ask(api, { status: 'BALANCE_INQUIRY', amount: 0 })).body.balance, { amount: before, available: before });
      assert.equal((await ask(api, { status: 'CREDIT_AUTHORIZATION', amount: 500 })).body.result, 'APPROVED');
      assert.equal(await cardBalanceOf(api), before);
    });

    test("a hold adjustment (a fuel pump's $1 with amounts.hold $100) holds the larger amount, and declines what it cannot hold", async (ctx) => {
      const api = await served(ctx, dialect);
      const before = await cardBalanceOf(api);
      const pump = (hold: number) => {
        const body = asaRequest({ cardToken: api.cardToken, amount: 100, created: api.t.clock.now(), mcc: '5542' });
        const amounts = body.amounts as { hold: { amount: number } };
        amounts.hold.amount = hold;
        return api.post(LITHIC_ASA_PATH, JSON.stringify(body), { 'x-lithic-hmac': asaSignature(body) });
      };
      assert.equal((await pump(10_000)).body.result, 'APPROVED');
      assert.equal(await cardBalanceOf(api), before - 10_000);
      assert.equal((await pump(before)).body.result, 'INSUFFICIENT_FUNDS', 'the rest of the balance cannot hold it');
    });

    test('an incremental authorization (same transaction, another event token) is held on its own', async (ctx) => {
      const api = await served(ctx, dialect);
      const token = randomUUID();
      const firstEvent = randomUUID();
      await ask(api, { token, eventToken: firstEvent, amount: 1_000 });
      await ask(api, { token, eventToken: firstEvent, amount: 1_000 });
      // A day later (a hotel's extras): the request keeps the transaction's first `created`, and is not stale for that.
      const first = api.t.clock.now();
      api.t.clock.advance(86_400_000);
      const increment = await ask(api, { token, eventToken: randomUUID(), amount: 300, created: first });
      assert.equal(increment.body.result, 'APPROVED');
      // A transaction never seen, as old: stale.
      assert.equal((await ask(api, { eventToken: randomUUID(), amount: 300, created: first })).status, 401);
      const holds = await api.t.database.db
        .selectFrom('card_authorizations')
        .select(['provider_transaction_id', 'amount'])
        .orderBy('created_at')
        .execute();
      assert.deepEqual(holds.map((h) => Number(h.amount)).sort(), [1_000, 300].sort());
    });

    test('a decision that fails answers a decline, not an error', async (ctx) => {
      const api = await served(ctx, dialect);
      await api.t.database.db.schema.dropTable('card_authorizations').execute();
      const { status, body } = await ask(api);
      assert.equal(status, 200);
      assert.equal(body.result, 'UNAUTHORIZED_MERCHANT');
    });

    test('a decision over its budget answers a decline; its late approval is released', async (ctx) => {
      const api = await served(ctx, dialect);
      const before = await cardBalanceOf(api);
      const request = asaRequest({ cardToken: api.cardToken, amount: 1_250, created: api.t.clock.now() }) as unknown as AsaRequest;
      let late: Promise<unknown> | undefined;
      const slowCore = {
        authorize: (input: Parameters<typeof api.t.core.authorize>[0]) => {
          late = new Promise((resolve) => setTimeout(resolve, 30)).then(() => api.t.core.authorize(input));
          return late as ReturnType<typeof api.t.core.authorize>;
        },
        voidAuthorization: api.t.core.voidAuthorization,
      };
      const answer = await decideAsa({ db: api.t.database.db, core: slowCore, budgetMs: 5 }, request);
      assert.deepEqual(answer, { result: 'UNAUTHORIZED_MERCHANT', token: request.token });
      await late;
      // The void runs right after the late approval; wait for it through the hold's status.
      for (let i = 0; i < 50; i += 1) {
        const hold = await api.t.database.db
          .selectFrom('card_authorizations')
          .select('status')
          .where('provider_transaction_id', '=', request.token)
          .executeTakeFirst();
        if (hold?.status === 'voided') break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      assert.equal(await cardBalanceOf(api), before);
    });
  });
}
