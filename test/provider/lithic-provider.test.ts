import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { after, afterEach, before, describe, test } from 'node:test';
import { startCore } from '../../src/app/compose.js';
import { loadConfig } from '../../src/app/config.js';
import { FakeClock } from '../../src/infra/clock.js';
import { readProviderSecrets, secretFingerprint } from '../../src/core/keys/provider-secrets.js';
import { LithicClient } from '../../src/core/provider/lithic/lithic-client.js';
import { LithicCardProvider } from '../../src/core/provider/lithic/lithic-provider.js';
import { adminCommands } from '../helpers/admin.js';
import { catalogue, newCustomer, TEST_CARD_DATA_KEY, type TestCore } from '../helpers/core.js';
import { assertNoProblems, lithicOpenApiSkip, lithicValidator } from '../helpers/lithic-openapi.js';

// The Lithic adapter against a small local server playing Lithic: every request it receives is checked
// against Lithic's OpenAPI document (path, method, body), and answered as the document describes.

interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: unknown;
}

const PAN = '4111111289144142';

/** The operations left waiting on the provider, of one kind. */
const pendingOf = (t: TestCore, kind: 'create_card' | 'close') =>
  t.database.db.selectFrom('pending_operations').select('id').where('kind', '=', kind).execute();
const TXN = '00000000-0000-4000-8000-0000000000aa';
const skip = lithicOpenApiSkip();

describe('Lithic provider', { skip }, () => {
  const seen: Seen[] = [];
  const cards = new Map<string, { token: string; state: string; memo: string; type: string; created: string }>();
  /** The answer each Idempotency-Key got first. */
  const byKey = new Map<string, unknown>();
  let stall = false;
  /** What the document finds wrong in the requests received: checked after each test. */
  const problems: string[] = [];
  afterEach(() => assertNoProblems(problems.splice(0), 'the requests sent to Lithic'));
  let baseUrl = '';
  const server = createServer((req, res) => void answer(req, res));

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const url = new URL(req.url ?? '/', 'http://x');
    const body = raw === '' ? undefined : JSON.parse(raw);
    seen.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body });
    if (stall) return; // never answered: the client's time limit must end the call
    if (body !== undefined) problems.push(...lithicValidator().request(req.method ?? '', url.pathname, body));
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    };
    if (req.headers.authorization !== 'test-lithic-key') return send(401, { message: 'Please provide API key in Authorization header' });
    const full = (c: { token: string; state: string; memo: string; type: string; created: string }) => ({
      ...c,
      account_token: '00000000-0000-4000-8000-000000000001',
      card_program_token: '00000000-0000-4000-8000-000000000002',
      funding: {},
      last_four: PAN.slice(-4),
      pin_status: 'OK',
      spend_limit: 0,
      spend_limit_duration: 'FOREVER',
      exp_month: '06',
      exp_year: '2029',
      pan: PAN,
      cvv: '776',
    });
    const byToken = /^\/v1\/cards\/([^/]+)$/.exec(url.pathname);
    if (req.method === 'POST' && url.pathname === '/v1/cards') {
      if (body.memo === 'Refused') return send(400, { message: 'Card program does not allow this card type' });
      // As Lithic: the same Idempotency-Key answers with the first request's answer, as it was then.
      const key = req.headers['idempotency-key'];
      const earlier = typeof key === 'string' ? byKey.get(key) : undefined;
      if (earlier) return send(200, earlier);
      const token = randomUUID();
      cards.set(token, { token, state: 'OPEN', memo: body.memo, type: body.type, created: new Date().toISOString() });
      const answer = full(cards.get(token)!);
      if (typeof key === 'string') byKey.set(key, structuredClone(answer));
      return send(200, answer);
    }
    if (req.method === 'GET' && url.pathname === '/v1/cards') {
      const data = [...cards.values()].filter((c) => c.memo.includes(url.searchParams.get('memo') ?? '')).map(full);
      return send(200, { data, has_more: false });
    }
    if (byToken && cards.has(byToken[1]!)) {
      const card = cards.get(byToken[1]!)!;
      if (req.method === 'PATCH') {
        if (card.state === 'CLOSED') return send(422, { message: 'Card is closed' });
        card.state = body.state;
      }
      return send(200, full(card));
    }
    if (url.pathname === '/v1/responder_endpoints') {
      return send(
        200,
        req.method === 'GET' ? { enrolled: true, url: 'https://cards.example.com/provider/lithic/asa' } : { enrolled: true },
      );
    }
    if (req.method === 'POST' && url.pathname === '/v1/event_subscriptions') return send(201, { token: 'sub-1', url: body.url });
    if (url.pathname === '/v1/auth_stream/secret') return send(200, { secret: 'asa-secret-from-lithic' });
    if (url.pathname === '/v1/event_subscriptions/sub-1/secret') return send(200, { secret: 'whsec_from_lithic' });
    if (url.pathname.startsWith('/v1/simulate/')) return send(201, { token: TXN, debugging_request_id: 'dbg' });
    send(404, { message: 'Not found' });
  }

  let t: TestCore;
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const clock = new FakeClock('2026-03-01T12:00:00.000Z');
    const runtime = await startCore({
      databaseUrl: ':memory:',
      cardDataKey: TEST_CARD_DATA_KEY,
      clock,
      settings: { providerTimeoutMs: 2_000 },
      lithic: { apiKey: 'test-lithic-key', apiUrl: baseUrl },
    });
    t = { ...runtime, clock };
  });
  after(async () => {
    await t.close();
    server.closeAllConnections();
    server.close();
  });

  test('a card is created with POST /v1/cards (its type, the nickname as memo, an Idempotency-Key) and its row holds no PAN', async () => {
    const alice = await newCustomer(t);
    const { bin, plan } = await catalogue(t);
    seen.length = 0;
    const card = await t.core.createCard(alice.caller, { bin_id: bin.id, planId: plan.id, name: 'Groceries', type: 'single_use' });
    const post = seen.find((s) => s.method === 'POST' && s.path === '/v1/cards')!;
    assert.deepEqual(post.body, { type: 'SINGLE_USE', memo: 'Groceries', state: 'OPEN' });
    assert.equal(post.headers['idempotency-key'], card.id);
    const row = await t.database.db.selectFrom('cards').selectAll().where('id', '=', card.id).executeTakeFirstOrThrow();
    assert.equal(row.provider_card_id, [...cards.values()].find((c) => c.memo === 'Groceries')!.token);
    assert.equal(row.masked_pan, '**** **** **** 4142');
    assert.equal(t.cipher.decrypt(row.pan_encrypted, `${card.id}:pan`), 'kept-by-provider');
    assert.equal(t.cipher.decrypt(row.cvv_encrypted, `${card.id}:cvv`), 'kept-by-provider');
    assert.ok(!JSON.stringify(row).includes(PAN));

    // The details are read from Lithic when asked, and still not kept.
    seen.length = 0;
    const details = await t.core.getSensitiveDetails(alice.caller, card.id);
    assert.deepEqual({ pan: details.pan, cvv: details.cvv, exp: details.exp }, { pan: PAN, cvv: '776', exp: '06/29' });
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.path}`),
      [`GET /v1/cards/${row.provider_card_id}`],
    );
    const after = await t.database.db.selectFrom('cards').select('pan_encrypted').where('id', '=', card.id).executeTakeFirstOrThrow();
    assert.equal(after.pan_encrypted, row.pan_encrypted);
  });

  test('freeze, unfreeze and close are PATCH /v1/cards/{card_token} with PAUSED, OPEN and CLOSED', async () => {
    const bob = await newCustomer(t, 100_000, 'Bob');
    const { bin, plan } = await catalogue(t);
    const card = await t.core.createCard(bob.caller, { bin_id: bin.id, planId: plan.id, name: 'Ads' });
    seen.length = 0;
    await t.core.freeze(bob.caller, card.id);
    await t.core.unfreeze(bob.caller, card.id);
    await t.core.close(bob.caller, card.id);
    const token = [...cards.values()].find((c) => c.memo === 'Ads')!.token;
    assert.deepEqual(
      seen.map((s) => [s.method, s.path, (s.body as { state?: string } | undefined)?.state]),
      [
        ['PATCH', `/v1/cards/${token}`, 'PAUSED'],
        ['PATCH', `/v1/cards/${token}`, 'OPEN'],
        ['PATCH', `/v1/cards/${token}`, 'CLOSED'],
      ],
    );
    assert.equal(cards.get(token)!.state, 'CLOSED');
  });

  test('a call Lithic does not answer is given up within its time limit, as a provider failure', async () => {
    const provider = new LithicCardProvider(new LithicClient({ apiKey: 'test-lithic-key', baseUrl, timeoutMs: 150, retries: 1 }));
    stall = true;
    seen.length = 0;
    try {
      await assert.rejects(provider.freeze('00000000-0000-4000-8000-000000000009'), {
        name: 'ProviderError',
        message: /did not answer PATCH \/v1\/cards\/[-0-9a-f]+ within 150 ms/,
      });
      // A PATCH that sets a state is safe to repeat: tried twice.
      assert.equal(seen.length, 2);
    } finally {
      stall = false;
    }
  });

  /** The recovery with Lithic not answering: nothing settled, every operation left to the next run. */
  async function waitsWhileLithicIsSilent() {
    stall = true;
    try {
      assert.deepEqual(await t.admin.recoverInterrupted(), [], 'Lithic not answering: it waits');
    } finally {
      stall = false;
    }
  }

  /** Runs `operation`, the provider's `method` crashing the process after Lithic acted (`acted`), or before it. */
  async function crashing(method: 'issue' | 'terminate', acted: boolean, operation: () => Promise<unknown>) {
    const provider = t.provider as unknown as Record<typeof method, (...args: unknown[]) => Promise<unknown>>;
    const original = provider[method].bind(t.provider);
    provider[method] = async (...args) => {
      if (acted) await original(...args);
      throw new Error('crash');
    };
    try {
      await assert.rejects(operation(), /crash/);
    } finally {
      provider[method] = original;
    }
  }

  /** A creation that crashes around Lithic's `POST /v1/cards`: after Lithic made the card (`made`), or before. */
  async function creationCrashing(made: boolean, name: string, type?: 'single_use') {
    const customer = await newCustomer(t, 100_000, name);
    const { bin, plan } = await catalogue(t);
    const walletBefore = (await t.core.walletBalance(customer.caller)).balance;
    await crashing('issue', made, () =>
      t.core.createCard(customer.caller, { bin_id: bin.id, planId: plan.id, name, ...(type && { type }) }),
    );
    const fee = walletBefore - (await t.core.walletBalance(customer.caller)).balance; // held while it is pending
    assert.ok(fee > 0);
    return { customer, bin, plan, walletBefore, fee };
  }

  test('a creation a crash left pending after Lithic made the card is finished with that card, asking Lithic', async () => {
    const { customer, bin, plan, walletBefore, fee } = await creationCrashing(true, 'Crash test');
    const made = [...cards.values()].find((c) => c.memo === 'Crash test')!;
    t.clock.advance(120_000);
    // A process starting (or the admin command line) does not wait on Lithic: what must be asked is left pending.
    seen.length = 0;
    assert.deepEqual(await t.admin.recoverUnasked(), []);
    assert.equal(seen.length, 0, 'Lithic not asked');
    // The cardholder's next creation does not settle it unasked (as it would a sandbox creation): it stays pending.
    await t.core.createCard(customer.caller, { bin_id: bin.id, planId: plan.id, name: 'Next one' });
    assert.equal((await pendingOf(t, 'create_card')).length, 1);
    const pendingId = (await pendingOf(t, 'create_card'))[0]!.id;
    seen.length = 0;
    const recovered = await t.admin.recoverInterrupted();
    assert.deepEqual(
      recovered.map((r) => [r.kind, r.completed]),
      [['create_card', true]],
    );
    // Asked by the same creation with the same Idempotency-Key: Lithic answers with the card it made (as it was
    // then), and the card is read for its state now.
    assert.deepEqual(
      seen.map((s) => [s.method, s.path, s.headers['idempotency-key']]),
      [
        ['POST', '/v1/cards', pendingId],
        ['GET', `/v1/cards/${made.token}`, undefined],
      ],
    );
    assert.equal([...cards.values()].filter((c) => c.memo === 'Crash test').length, 1, 'no second card');
    // The card is the cardholder's, active, Lithic's token its provider id; both fees taken; Lithic's card left open.
    const mine = (await t.core.listCards(customer.caller)).find((c) => c.name === 'Crash test')!;
    assert.equal(mine.status, 'active');
    const row = await t.database.db.selectFrom('cards').selectAll().where('id', '=', mine.id).executeTakeFirstOrThrow();
    assert.deepEqual([row.provider_card_id, row.masked_pan], [made.token, '**** **** **** 4142']);
    assert.equal(made.state, 'OPEN');
    assert.equal((await t.core.walletBalance(customer.caller)).balance, walletBefore - 2 * fee);
    const ledger = await t.admin.checkLedger();
    assert.deepEqual([ledger.differences, ledger.total], [[], 0]);
  });

  test('a creation whose card was closed at Lithic since is released, not taken; one older than a day is released unasked', async () => {
    const closed = await creationCrashing(true, 'Closed since');
    [...cards.values()].find((c) => c.memo === 'Closed since')!.state = 'CLOSED';
    t.clock.advance(120_000);
    assert.deepEqual(
      (await t.admin.recoverInterrupted()).map((r) => [r.kind, r.completed]),
      [['create_card', undefined]],
    );
    assert.deepEqual(await t.core.listCards(closed.customer.caller), []);
    assert.equal((await t.core.walletBalance(closed.customer.caller)).balance, closed.walletBefore);

    const old = await creationCrashing(false, 'A day old');
    t.clock.advance(24 * 3_600_000);
    seen.length = 0;
    assert.deepEqual(
      (await t.admin.recoverInterrupted()).map((r) => [r.kind, r.completed]),
      [['create_card', undefined]],
    );
    assert.equal(seen.length, 0, 'past the key: Lithic is not asked, so no second card is made');
    assert.equal((await t.core.walletBalance(old.customer.caller)).balance, old.walletBefore);
  });

  test('two creations of the same name, one crashed before Lithic made its card and one after, each finish with its own', async () => {
    const alice = await creationCrashing(false, 'Streaming');
    const { customer: bob } = await creationCrashing(true, 'Streaming', 'single_use');
    t.clock.advance(120_000);
    const recovered = await t.admin.recoverInterrupted();
    assert.deepEqual(
      recovered.map((r) => [r.kind, r.completed]),
      [
        ['create_card', true],
        ['create_card', true],
      ],
    );
    const rows = await t.database.db
      .selectFrom('cards')
      .select(['user_id', 'type', 'status', 'provider_card_id'])
      .where('name', '=', 'Streaming')
      .execute();
    const of = (userId: string) => rows.find((r) => r.user_id === userId)!;
    const [a, b] = [of(alice.customer.caller.userId), of(bob.caller.userId)];
    assert.notEqual(a.provider_card_id, b.provider_card_id);
    assert.deepEqual(
      [a.type, a.status, cards.get(a.provider_card_id)?.type, b.type, b.status, cards.get(b.provider_card_id)?.type],
      ['multi_use', 'active', 'VIRTUAL', 'single_use', 'active', 'SINGLE_USE'],
    );
  });

  test('a creation a crash left pending that Lithic refuses is released, the fee given back; Lithic unreachable, it waits', async () => {
    const { customer, walletBefore } = await creationCrashing(false, 'Refused');
    t.clock.advance(120_000);
    await waitsWhileLithicIsSilent();
    const recovered = await t.admin.recoverInterrupted();
    assert.deepEqual(
      recovered.map((r) => [r.kind, r.completed]),
      [['create_card', undefined]],
    );
    assert.deepEqual(await t.core.listCards(customer.caller), []);
    assert.equal((await t.core.walletBalance(customer.caller)).balance, walletBefore);
  });

  /** Makes the provider's `terminate` crash the closure: after Lithic acted (`acted`) or before. */
  async function closureCrashing(acted: boolean, name: string) {
    const customer = await newCustomer(t, 100_000, name);
    const { bin, plan } = await catalogue(t);
    const card = await t.core.createCard(customer.caller, { bin_id: bin.id, planId: plan.id, name });
    t.clock.advance(3_600_000);
    await t.core.topup(customer.caller, card.id, { amount: 2_500 });
    const walletBefore = (await t.core.walletBalance(customer.caller)).balance;
    await crashing('terminate', acted, () => t.core.close(customer.caller, card.id));
    const token = [...cards.values()].find((c) => c.memo === name)!.token;
    return { customer, card, walletBefore, token, bin, plan };
  }

  test('a closure a crash left pending after Lithic closed the card is finished by asking Lithic: the balance on the wallet', async () => {
    const { customer, card, walletBefore, token, bin, plan } = await closureCrashing(true, 'Closed at Lithic');
    assert.equal(cards.get(token)!.state, 'CLOSED');
    t.clock.advance(120_000);
    // The cardholder's next operation leaves it to the recovery that asks.
    await t.core.createCard(customer.caller, { bin_id: bin.id, planId: plan.id, name: 'After the crash' });
    assert.equal((await pendingOf(t, 'close')).length, 1);
    const walletMid = (await t.core.walletBalance(customer.caller)).balance;
    seen.length = 0;
    const recovered = await t.admin.recoverInterrupted();
    assert.deepEqual(
      recovered.map((r) => [r.kind, r.amount, r.completed]),
      [['close', 2_500, true]],
    );
    assert.deepEqual(
      seen.map((s) => `${s.method} ${s.path}`),
      [`GET /v1/cards/${token}`],
    );
    assert.equal((await t.core.getCard(customer.caller, card.id)).status, 'closed');
    assert.equal((await t.core.walletBalance(customer.caller)).balance, walletMid + 2_500);
    assert.ok(walletMid < walletBefore, 'the second card was paid for');
    const lines = (await t.core.listTransactions(customer.caller, { card_id: card.id })).data;
    assert.ok(lines.some((l) => l.type === 'card_close' && l.status === 'Approved' && l.amount === 2_500));
    const ledger = await t.admin.checkLedger();
    assert.deepEqual([ledger.differences, ledger.total], [[], 0]);
  });

  test('closing the card again settles a closure a crash left waiting first, asking Lithic: already closed', async () => {
    const { customer, card, walletBefore } = await closureCrashing(true, 'Closed twice');
    t.clock.advance(16 * 60_000);
    // Someone else's close of it asks Lithic nothing and settles nothing.
    const mallory = await newCustomer(t, 100, 'Mallory');
    seen.length = 0;
    await assert.rejects(t.core.close(mallory.caller, card.id), { message: 'Card not found or access denied' });
    assert.equal(seen.length, 0);
    assert.equal((await pendingOf(t, 'close')).length, 1);
    await assert.rejects(t.core.close(customer.caller, card.id), { message: 'Card is already closed' });
    assert.equal((await t.core.getCard(customer.caller, card.id)).status, 'closed');
    assert.equal((await t.core.walletBalance(customer.caller)).balance, walletBefore + 2_500);
    assert.equal((await pendingOf(t, 'close')).length, 0);
  });

  test('a closure a crash left pending before Lithic acted is released when Lithic shows the card open; unasked, it waits', async () => {
    const { customer, card, token } = await closureCrashing(false, 'Still open');
    assert.equal(cards.get(token)!.state, 'OPEN');
    t.clock.advance(120_000);
    await waitsWhileLithicIsSilent();
    assert.equal((await pendingOf(t, 'close')).length, 1);
    const recovered = await t.admin.recoverInterrupted();
    assert.deepEqual(
      recovered.map((r) => [r.kind, r.completed]),
      [['close', undefined]],
    );
    const after = await t.core.getCard(customer.caller, card.id);
    assert.deepEqual([after.status, after.balance], ['active', 2_500]);
    const ledger = await t.admin.checkLedger();
    assert.deepEqual([ledger.differences, ledger.total], [[], 0]);
  });

  test('provider lithic status, enroll and simulate through the admin command line', async () => {
    const admin = adminCommands(() => t);
    const status = await admin('provider', 'lithic', 'status', '--json');
    assert.equal(status.code, 0, status.out);
    assert.deepEqual(
      { ...status.json(), apiUrl: undefined },
      {
        ok: true,
        apiUrl: undefined,
        reachable: true,
        keyValid: true,
        asaEnrolled: true,
        asaUrl: 'https://cards.example.com/provider/lithic/asa',
      },
    );
    seen.length = 0;
    const enrolled = await admin('provider', 'lithic', 'enroll', '--url', 'https://cards.example.com', '--json');
    assert.equal(enrolled.code, 0, enrolled.out);
    // Stored sealed with the card-data key, bound to their names; printed only as fingerprints, never themselves.
    assert.deepEqual(
      {
        asa: enrolled.json().asaSecretFingerprint,
        webhook: enrolled.json().webhookSecretFingerprint,
        stored: enrolled.json().secretsStored,
      },
      { asa: secretFingerprint('asa-secret-from-lithic'), webhook: secretFingerprint('whsec_from_lithic'), stored: true },
    );
    const human = await admin('provider', 'lithic', 'enroll', '--url', 'https://cards.example.com');
    assert.equal(human.code, 0, human.out);
    assert.match(human.out, new RegExp(`ASA secret ${secretFingerprint('asa-secret-from-lithic')}`));
    assert.match(human.out, /Restart the service/);
    for (const out of [enrolled.out, human.out, enrolled.err, human.err]) {
      assert.ok(!out.includes('asa-secret-from-lithic') && !out.includes('whsec_from_lithic'), 'no secret is printed');
    }
    const rows = await t.database.db.selectFrom('provider_secrets').selectAll().orderBy('name').execute();
    assert.deepEqual(
      rows.map((r) => r.name),
      ['LITHIC_ASA_SECRET', 'LITHIC_WEBHOOK_SECRET'],
    );
    assert.ok(rows.every((r) => !r.value_encrypted.includes('secret') && !r.value_encrypted.includes('whsec')));
    assert.equal(t.cipher.decrypt(rows[0]!.value_encrypted, 'provider_secrets:LITHIC_ASA_SECRET'), 'asa-secret-from-lithic');
    assert.throws(() => t.cipher.decrypt(rows[0]!.value_encrypted, 'provider_secrets:LITHIC_WEBHOOK_SECRET'), 'bound to its name');
    assert.deepEqual(await readProviderSecrets(t.database.db, t.cipher), {
      LITHIC_ASA_SECRET: 'asa-secret-from-lithic',
      LITHIC_WEBHOOK_SECRET: 'whsec_from_lithic',
    });
    assert.deepEqual(seen[0]!.body, { type: 'AUTH_STREAM_ACCESS', url: 'https://cards.example.com/provider/lithic/asa' });
    assert.equal((seen[1]!.body as { url: string }).url, 'https://cards.example.com/provider/lithic/events');

    const dave = await newCustomer(t, 100_000, 'Dave');
    const { bin, plan } = await catalogue(t);
    const card = await t.core.createCard(dave.caller, { bin_id: bin.id, planId: plan.id, name: 'Sim' });
    seen.length = 0;
    const authorized = await admin(
      'provider',
      'lithic',
      'simulate',
      'authorize',
      '--card',
      card.id,
      '--amount',
      '12.34',
      '--merchant',
      'Shop',
      '--mcc',
      '5411',
      '--json',
    );
    assert.equal(authorized.code, 0, authorized.out);
    assert.equal(authorized.json().transactionToken, TXN);
    assert.deepEqual(seen.at(-1)!.body, { pan: PAN, amount: 1234, descriptor: 'Shop', mcc: '5411' });
    assert.ok(!authorized.out.includes(PAN));
    const cleared = await admin('provider', 'lithic', 'simulate', 'clear', '--transaction', TXN, '--json');
    assert.equal(cleared.code, 0, cleared.out);
    assert.deepEqual(seen.at(-1)!.body, { token: TXN });
    const voided = await admin('provider', 'lithic', 'simulate', 'void', '--transaction', TXN, '--json');
    assert.equal(voided.code, 0);
    assert.equal(seen.at(-1)!.path, '/v1/simulate/void');
    const returned = await admin('provider', 'lithic', 'simulate', 'return', '--card', card.id, '--amount', '5', '--json');
    assert.equal(returned.code, 0, returned.out);
    assert.deepEqual(seen.at(-1)!.body, { pan: PAN, amount: 500, descriptor: 'Simulated merchant' });
  });

  test('a refused API key shows in status as reachable with the key not valid', async () => {
    const other = { ...t, lithic: new LithicClient({ apiKey: 'wrong-key', baseUrl, timeoutMs: 1_000 }) };
    const status = await adminCommands(() => other)('provider', 'lithic', 'status', '--json');
    assert.equal(status.json().reachable, true);
    assert.equal(status.json().keyValid, false);
    assert.deepEqual([status.code, status.json().ok], [1, false], 'a failed check, for scripts');
    const away = {
      ...t,
      lithic: new LithicClient({ apiKey: 'test-lithic-key', baseUrl: 'http://127.0.0.1:9', timeoutMs: 1_000, retries: 0 }),
    };
    const unreachable = await adminCommands(() => away)('provider', 'lithic', 'status');
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.out, /reachable: no/);
  });
});

describe('Lithic settings', () => {
  const base = { BOT_TOKEN: '123:abc' };
  test('CARD_PROVIDER is sandbox unless set, and needs nothing', () => {
    assert.equal(loadConfig(base).CARD_PROVIDER, 'sandbox');
  });
  test('CARD_PROVIDER=lithic without LITHIC_API_KEY is refused, naming the setting', () => {
    assert.throws(() => loadConfig({ ...base, CARD_PROVIDER: 'lithic' }), /CARD_PROVIDER=lithic needs LITHIC_API_KEY/);
  });
  test('CARD_PROVIDER=lithic is refused in remote mode', () => {
    assert.throws(
      () => loadConfig({ ...base, CARD_PROVIDER: 'lithic', LITHIC_API_KEY: 'key_12345678', CARD_SERVICE_URL: 'https://cards.example.com' }),
      /remote mode/,
    );
  });
  test("LITHIC_API_URL defaults to Lithic's sandbox and refuses plain http off this machine", () => {
    assert.equal(
      loadConfig({ ...base, CARD_PROVIDER: 'lithic', LITHIC_API_KEY: 'key_12345678' }).LITHIC_API_URL,
      'https://sandbox.lithic.com',
    );
    assert.throws(() => loadConfig({ ...base, LITHIC_API_URL: 'http://lithic.example.com' }), /unencrypted/);
  });
  test('a refusal never shows the API key', () => {
    const error = (() => {
      try {
        loadConfig({ ...base, CARD_PROVIDER: 'lithic', LITHIC_API_KEY: 'secret key with spaces' });
      } catch (e) {
        return e as Error;
      }
    })();
    assert.ok(error && !error.message.includes('secret key with spaces'));
  });
});

describe('Lithic client', () => {
  test('a refusal is a 4XX about the request: not a refused key, nor one worth another attempt', async () => {
    const { LithicApiError } = await import('../../src/core/provider/lithic/lithic-client.js');
    const refused = [400, 401, 403, 404, 409, 410, 422, 429, 500, 503].filter((status) => new LithicApiError(status, 'x').refused);
    assert.deepEqual(refused, [400, 404, 410, 422]);
  });

  test('a base URL with a path of its own (a proxy) keeps it: /lithic/v1/cards/…, not /v1/cards/…', async () => {
    const asked: string[] = [];
    const client = new LithicClient({
      apiKey: 'k',
      baseUrl: 'http://127.0.0.1:9/lithic/',
      timeoutMs: 1_000,
      fetch: async (url) => {
        asked.push(String(url));
        const card = { token: 'card-1', last_four: '4142', state: 'OPEN', type: 'VIRTUAL' };
        return new Response(JSON.stringify(card), { headers: { 'content-type': 'application/json' } });
      },
    });
    await new LithicCardProvider(client).stateOf('card-1');
    assert.equal(new URL(asked[0]!).pathname, '/lithic/v1/cards/card-1');
  });
});
