import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { newCard, newCustomer, type Customer } from '../helpers/core.js';
import { startTestApi, type TestApi } from '../helpers/http.js';

// Thousands of random and malformed requests: always a JSON envelope, never a 5xx, and after every
// 4xx the database is as it was. (Two things a 4xx may legitimately leave, and the snapshot leaves
// out: the attempt stamp a refused top-up or withdrawal sets, since the spec counts attempts for its
// cooldowns, and an Idempotency-Key's stored reply.)

const RUNS = 2500;

describe('fuzzing the HTTP interface', () => {
  let api: TestApi;
  let alice: Customer;
  let bob: Customer;
  let revokedToken: string;
  let aliceCard: string;
  let bobCard: string;

  before(async () => {
    api = await startTestApi({ bodyLimit: 4096 });
    alice = await newCustomer(api.t, 1_000_000, 'Alice');
    bob = await newCustomer(api.t, 1_000_000, 'Bob');
    revokedToken = await api.t.admin.issueToken(alice.userId);
    await api.t.admin.revokeToken(revokedToken);
    aliceCard = (await newCard(api.t, alice)).id;
    bobCard = (await newCard(api.t, bob)).id;
    await api.t.core.topup(alice.caller, aliceCard, { amount: 50_000 });
  });
  after(() => api.close());

  async function snapshot() {
    const db = api.t.database.db;
    const ledger = await api.t.admin.checkLedger();
    const count = async (table: string) =>
      Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(db)).rows[0]!.n);
    const counts: Record<string, number> = {};
    for (const table of [
      'users',
      'api_tokens',
      'accounts',
      'journals',
      'entries',
      'cards',
      'card_transactions',
      'card_otps',
      'coupons',
      'outbox',
    ]) {
      counts[table] = await count(table);
    }
    const accounts = await db.selectFrom('accounts').select(['id', 'balance']).orderBy('id').execute();
    const cards = await db.selectFrom('cards').select(['id', 'status', 'deposit', 'name', 'provider_card_id']).orderBy('id').execute();
    const tokens = await db.selectFrom('api_tokens').select(['id', 'revoked_at']).orderBy('id').execute();
    return { total: ledger.total, differences: ledger.differences, counts, accounts, cards, tokens };
  }

  const ascii = (maxLength: number) => fc.string({ unit: 'binary-ascii', maxLength }).map((s) => s.replace(/[^\x20-\x7e]/g, ''));

  const cardIdArb = fc.oneof(
    { arbitrary: fc.constant(null).map(() => aliceCard), weight: 4 },
    fc
      .constantFrom(
        () => aliceCard,
        () => bobCard,
        () => '',
        () => 'transactions',
        () => '1',
        () => '2',
        () => '%zz',
        () => 'a'.repeat(120),
      )
      .map((f) => f()),
    fc.uuid(),
    ascii(40).map(encodeURIComponent),
  );
  const suffixArb = fc.constantFrom(
    '',
    '/topup',
    '/topup/quote',
    '/withdraw',
    '/freeze',
    '/unfreeze',
    '/close',
    '/details',
    '/otps',
    '/otps/request',
    '/x',
    '/topup/',
  );
  const queryArb = fc.oneof(
    fc.constant(''),
    fc
      .array(
        fc.tuple(
          fc.constantFrom('page', 'limit', 'card_id', 'x', '__proto__', 'constructor'),
          fc.oneof(fc.integer({ min: -5, max: 200 }).map(String), ascii(12), fc.uuid()),
        ),
        { maxLength: 3 },
      )
      .map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}` : '')),
  );
  const pathArb = fc.oneof(
    { arbitrary: fc.tuple(cardIdArb, suffixArb).map(([id, suffix]) => `/api/v1/cards/${id}${suffix}`), weight: 3 },
    fc.tuple(cardIdArb, suffixArb).map(([id, suffix]) => `/api/v1/cards/${id}${suffix}`),
    fc
      .tuple(
        fc.constantFrom(
          '/api/v1/cards/transactions',
          '/api/v1/cards',
          '/api/v1/health',
          '/api/v1/bins',
          '/api/v1/card-plans',
          '/api/v1/wallet/balance',
          '/livez',
        ),
        queryArb,
      )
      .map(([p, q]) => p + q),
    ascii(30).map((s) => `/api/v1/${encodeURIComponent(s)}`),
  );
  const amountArb = fc.oneof(
    fc.double(),
    fc.integer(),
    fc.integer({ min: 100, max: 1_100_000 }).map((c) => c / 100),
    fc.constantFrom('10', null, true, [], {}, 1e308, -0, 5.005, '1e3'),
  );
  const bodyArb = fc.oneof(
    fc.constant(undefined),
    fc.json({ maxDepth: 3 }),
    fc.record({ amount: amountArb }, { requiredKeys: [] }).map((b) => JSON.stringify(b)),
    fc.record({ amount: amountArb, extra: fc.jsonValue({ maxDepth: 1 }) }).map((b) => JSON.stringify(b)),
    fc
      .record(
        {
          bin_id: fc.oneof(fc.uuid(), ascii(10)),
          name: ascii(300),
          planId: fc.oneof(fc.integer(), fc.double(), ascii(3)),
          coupon_id: ascii(5),
        },
        { requiredKeys: [] },
      )
      .map((b) => JSON.stringify(b)),
    fc.constantFrom(
      '{"__proto__":{"amount":5}}',
      '{"amount":5,"constructor":{}}',
      '{',
      '{"amount":}',
      'x'.repeat(5000),
      '{"amount":1e999}',
      '[]',
      'null',
      '""',
    ),
    ascii(60),
  );
  const tokenArb = fc.oneof(
    { arbitrary: fc.constant(null).map(() => alice.token), weight: 6 },
    fc
      .constantFrom(
        () => alice.token,
        () => bob.token,
        () => revokedToken,
      )
      .map((f) => f()),
    fc.constant(undefined),
    ascii(80),
  );
  const requestArb = fc.record({
    method: fc.constantFrom('GET', 'POST', 'PATCH', 'PUT', 'DELETE'),
    path: pathArb,
    body: bodyArb,
    token: tokenArb,
    contentType: fc.oneof(
      { arbitrary: fc.constant('application/json'), weight: 6 },
      fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', undefined),
      ascii(30),
    ),
    authScheme: fc.constantFrom('Bearer ', 'Bearer ', 'Bearer ', 'Bearer ', 'bearer ', 'Basic ', '', 'Bearer  '),
    idempotencyKey: fc.option(fc.oneof(ascii(20), fc.constant('k')), { freq: 5 }),
  });

  const routeArb = fc.constantFrom(
    ['GET', ''],
    ['GET', '/details'],
    ['GET', '/otps'],
    ['POST', '/topup'],
    ['POST', '/topup/quote'],
    ['POST', '/withdraw'],
    ['PATCH', '/freeze'],
    ['PATCH', '/unfreeze'],
    ['PATCH', '/close'],
    ['POST', '/otps/request'],
  );
  const aimedArb = fc
    .tuple(requestArb, routeArb, cardIdArb)
    .map(([req, [method, suffix], id]) => ({ ...req, method: method!, path: `/api/v1/cards/${id}${suffix}` }));

  test(`${RUNS} random requests: a JSON envelope, never 5xx, nothing changed by any 4xx`, async (t) => {
    let state = await snapshot();
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fc.oneof({ arbitrary: aimedArb, weight: 3 }, { arbitrary: requestArb, weight: 2 }), async (req) => {
        const headers: Record<string, string> = {};
        if (req.token !== undefined) headers.authorization = req.authScheme + req.token;
        if (req.contentType !== undefined && req.body !== undefined) headers['content-type'] = req.contentType;
        if (req.idempotencyKey !== null) headers['idempotency-key'] = req.idempotencyKey;
        const body = req.method === 'GET' ? undefined : req.body;
        const r = await api.call(req.method, req.path, { body, headers });
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        assert.ok(r.status < 500, `${req.method} ${req.path} → ${r.status} ${r.text}`);
        assert.equal(typeof r.body, 'object', r.text);
        assert.equal(typeof r.body.success, 'boolean');
        assert.equal(typeof r.body.timestamp, 'string');
        if (r.status >= 400) {
          assert.equal(r.body.success, false);
          assert.ok(typeof r.body.message === 'string' || typeof r.body.error === 'string', r.text);
          assert.deepEqual(await snapshot(), state, `${req.method} ${req.path} ${r.status} changed the database`);
        } else {
          assert.equal(r.body.success, true);
          state = await snapshot();
          assert.deepEqual(state.differences, []);
        }
        // Step over cooldowns now and then so some money operations succeed.
        api.t.clock.advance(60_000);
      }),
      { numRuns: RUNS },
    );
    t.diagnostic(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
    assert.deepEqual((await api.t.admin.checkLedger()).differences, []);
    assert.ok((statuses.get(401) ?? 0) > 0 && (statuses.get(404) ?? 0) > 0 && (statuses.get(400) ?? 0) > 0);
  });
});
