import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { CardServiceError } from '../../src/core/rules/errors.js';
import { createRequestBudget } from '../../src/remote/budget.js';
import { createRemoteCardClient, OutcomeUnknownError, ServiceBusyError, ServiceUnavailableError } from '../../src/remote/client.js';
import { RemoteRefusal } from '../../src/remote/refusals.js';
import { FakeCardService } from '../helpers/fake-card-service.js';
import { newCustomer } from '../helpers/core.js';
import { startTestApi, type TestApi } from '../helpers/http.js';

/** A refusal of `code`, with these figures when given. */
async function refusedWith(call: Promise<unknown>, code: string, params?: Record<string, unknown>) {
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof CardServiceError, `expected a refusal, got ${String(error)}`);
    assert.equal(error.code, code);
    if (params) assert.deepEqual({ ...error.params }, params);
    return true;
  });
}

describe('remote card-service client against a service written from the spec', () => {
  let fake: FakeCardService;
  let now = Date.parse('2026-03-01T12:00:00.000Z');
  before(async () => {
    fake = await new FakeCardService({ now: () => now }).listen();
  });
  after(() => fake.close());
  const client = () => createRemoteCardClient({ baseUrl: fake.url, timeoutMs: 2_000, retryDelayMs: 1 });

  test('the current shapes: every operation reads into one view', async () => {
    const token = fake.addUser('current', 50_000);
    const me = client().as(token);
    assert.equal((await me.health()).status, 'healthy');
    const bins = await me.listBins();
    assert.equal(bins.length, 2);
    assert.deepEqual(bins[1], {
      id: bins[1]!.id,
      bin: '428837',
      network: 'visa',
      threeDS: false,
      wallet: false,
      currency: 'USD',
      country: 'US',
      initialBalance: 500,
    });
    const plans = await me.listPlans();
    assert.deepEqual(
      plans.map((p) => [p.id, p.limit, p.creationFee]),
      [
        [1, 100_000, 500],
        [2, 1_000_000, 2_000],
      ],
    );
    const created = await me.createCard({ binId: bins[1]!.id, name: 'Ads', planId: 1 });
    assert.equal(created.status, 'active');
    assert.equal(created.balance, 500);
    assert.equal(created.address, '1 Main St, Dover, DE, 19901, US');
    const card = await me.getCard(created.id);
    assert.equal(card.status, 'active');
    assert.equal(card.balance, 500);
    assert.equal(card.deposit, 500);

    const topup = await me.topup(created.id, 2_500);
    assert.deepEqual(
      { fee: topup.platformFee, total: topup.totalCharged, card: topup.newCardBalance, wallet: topup.walletBalance },
      { fee: 100, total: 2_600, card: 3_000, wallet: 50_000 - 500 - 2_600 },
    );
    const withdrawn = await me.withdraw(created.id, 1_000);
    assert.deepEqual({ out: withdrawn.amountWithdrawn, card: withdrawn.newCardBalance }, { out: 1_000, card: 2_000 });
    assert.equal((await me.freeze(created.id)).status, 'frozen');
    assert.equal((await me.unfreeze(created.id)).status, 'active');
    const details = await me.details(created.id);
    assert.equal(details.pan, fake.cards.get(created.id)!.pan);

    fake.addOtp(created.id, '402211');
    const otps = await me.listOtps(created.id);
    assert.deepEqual(
      otps.otps.map((o) => [o.code, o.amount]),
      [['402211', 1_299]],
    );
    assert.equal((await me.requestOtp(created.id))?.code, '402211');

    const page = await me.listTransactions({ cardId: created.id });
    assert.deepEqual(
      page.data.map((t) => [t.type, t.side, t.amount]),
      [
        ['withdrawal', 'Debit', 1_000],
        ['topup', 'Credit', 2_500],
        ['deposit', 'Credit', 500],
      ],
    );
    assert.equal(page.pagination.total, 3);
    now += 15 * 60_000;
    const closed = await me.close(created.id);
    assert.deepEqual(
      { out: closed.balanceWithdrawn, wallet: closed.newWalletBalance },
      { out: 2_000, wallet: 50_000 - 500 - 2_600 + 3_000 },
    );
    assert.equal((await me.walletBalance()).balance, 50_000 - 500 - 2_600 + 3_000);
  });

  test('the earlier shapes: BIN, Processing, new_balance, and card data dropped from the card record', async () => {
    const token = fake.addUser('earlier');
    const me = client().as(token);
    const bins = await me.listBins();
    assert.deepEqual(bins[0], { id: bins[0]!.id, bin: '531993', threeDS: true, wallet: true, currency: 'USD' });
    const created = await me.createCard({ binId: bins[0]!.id, name: 'Old', planId: 2 });
    assert.equal(created.status, 'processing');
    assert.equal(created.address, '1 Main St, Dover, DE 19901, US');
    await refusedWith(me.freeze(created.id), 'CARD_NOT_READY_FREEZE');
    fake.activate(created.id);
    const card = await me.getCard(created.id);
    assert.equal(card.status, 'active');
    const secret = fake.cards.get(created.id)!;
    const seen = JSON.stringify(card);
    assert.ok(!seen.includes(secret.pan) && !('PAN' in card) && !('CVV' in card) && !('EXP' in card), 'card data is dropped at the edge');
    const topup = await me.topup(created.id, 1_000);
    assert.deepEqual(
      { fee: topup.platformFee, card: topup.newCardBalance, wallet: topup.walletBalance },
      { fee: 130, card: 1_000, wallet: undefined },
    );
    // The earlier text leaves out what was asked: the request's own amount stands in.
    await refusedWith(me.withdraw(created.id, 5_000), 'INSUFFICIENT_CARD_BALANCE', { available: 1_000, requested: 5_000 });
  });

  test('refusals in any status read back into codes with their figures; unknown texts stay as written', async () => {
    const token = fake.addUser('current', 1_000);
    const me = client().as(token);
    const [bin] = await me.listBins();
    await refusedWith(me.createCard({ binId: bin!.id, name: 'A', planId: 2 }), 'INSUFFICIENT_BALANCE', { required: 2_000 });
    await refusedWith(me.createCard({ binId: 'nope', name: 'A', planId: 1 }), 'INVALID_BIN');
    await assert.rejects(me.createCard({ binId: bin!.id, name: '', planId: 1 }), (error: unknown) => {
      assert.ok(error instanceof CardServiceError && error.code === 'VALIDATION');
      assert.equal(error.issues?.[0]?.message, 'Card name is required');
      return true;
    });
    const created = await me.createCard({ binId: bin!.id, name: 'A', planId: 1 });
    // 403 for a card that is not the caller's.
    await refusedWith(me.getCard('00000000-0000-4000-8000-000000000000'), 'CARD_NOT_FOUND');
    await refusedWith(me.topup(created.id, 2_000), 'INSUFFICIENT_WALLET_BALANCE', {
      total: 2_160,
      amount: 2_000,
      fee: 160,
      available: 500,
    });
    // The cooldown came as 200 with `success: false`.
    await refusedWith(me.topup(created.id, 2_000), 'TOPUP_COOLDOWN', { seconds: 120 });
    now += 121_000;
    await refusedWith(me.topup(created.id, 1_000_001), 'VALIDATION');
    await refusedWith(me.requestOtp(created.id), 'NO_OTP');
    // Words the bot does not know are shown as the service wrote them.
    await assert.rejects(me.createCard({ binId: bin!.id, name: 'A', planId: 99 }), (error: unknown) => {
      assert.ok(error instanceof RemoteRefusal);
      assert.deepEqual([error.message, error.status], ['Invalid input data', 400]);
      return true;
    });
    fake.revoke(token);
    await refusedWith(me.walletBalance(), 'INVALID_TOKEN');
  });

  test('what the interface does not promise is tried once and remembered as absent', async () => {
    const token = fake.addUser('current');
    const c = client();
    const me = c.as(token);
    const before = fake.requests.length;
    assert.equal(await me.listCards(), undefined);
    assert.equal(await me.listCards(), undefined);
    const [bin] = await me.listBins();
    const created = await me.createCard({ binId: bin!.id, name: 'Q', planId: 1 });
    assert.equal(await me.quoteTopup(created.id, 1_000), undefined);
    assert.equal(await me.quoteTopup(created.id, 1_000), undefined);
    assert.deepEqual(c.capabilities(), { listCards: 'absent', topupQuote: 'absent', otpRequest: 'unknown' });
    const asked = fake.requests.slice(before).map((r) => `${r.method} ${r.path.replace(created.id, ':id')}`);
    assert.deepEqual(asked, ['GET /api/v1/cards', 'GET /api/v1/bins', 'POST /api/v1/cards', 'POST /api/v1/cards/:id/topup/quote']);
  });

  test('the OTP-e-mail request (4.14) is detected: a service without the route answers undefined, once; its refusals stay refusals', async () => {
    const token = fake.addUser('current');
    const c = client();
    const me = c.as(token);
    const [bin] = await me.listBins();
    const created = await me.createCard({ binId: bin!.id, name: 'E', planId: 1 });
    await refusedWith(me.requestOtp(created.id), 'NO_OTP');
    assert.equal(c.capabilities().otpRequest, 'unknown', 'a refusal in known words says the route is there');
    fake.otpRequest = false;
    try {
      const before = fake.requests.length;
      assert.equal(await me.requestOtp(created.id), undefined);
      assert.equal(await me.requestOtp(created.id), undefined);
      assert.equal(c.capabilities().otpRequest, 'absent');
      assert.equal(fake.requests.length - before, 1, 'asked once');
    } finally {
      fake.otpRequest = true;
    }
  });

  test('POSTs and PATCHes carry an Idempotency-Key; GETs do not', async () => {
    const token = fake.addUser('current');
    const me = client().as(token);
    const before = fake.requests.length;
    const [bin] = await me.listBins();
    const created = await me.createCard({ binId: bin!.id, name: 'K', planId: 1 });
    await me.freeze(created.id);
    assert.deepEqual(
      fake.requests.slice(before).map((r) => [r.method, r.idempotencyKey]),
      [
        ['GET', false],
        ['POST', true],
        ['PATCH', true],
      ],
    );
  });

  test('a GET is retried while the service answers 5xx, and gives up as unavailable', async () => {
    const token = fake.addUser('current');
    const me = client().as(token);
    fake.down = true;
    const before = fake.requests.length;
    await assert.rejects(me.walletBalance(), ServiceUnavailableError);
    assert.equal(fake.requests.length - before, 3, 'the first try and two retries');
    let calls = 0;
    const flaky = createRemoteCardClient({
      baseUrl: fake.url,
      timeoutMs: 2_000,
      retryDelayMs: 1,
      fetch: (input, init) => {
        if (++calls === 2) fake.down = false;
        return fetch(input, init);
      },
    });
    assert.equal((await flaky.as(token).walletBalance()).balance, 100_000);
    assert.equal(calls, 2);
  });

  test('a POST that gets no answer is sent once and its outcome is unknown', async () => {
    const token = fake.addUser('current');
    const me = createRemoteCardClient({ baseUrl: fake.url, timeoutMs: 300, retryDelayMs: 1 }).as(token);
    const [bin] = await me.listBins();
    const created = await me.createCard({ binId: bin!.id, name: 'T', planId: 1 });
    fake.hang = (method, path) => method === 'POST' && path.endsWith('/topup');
    try {
      const before = fake.requests.length;
      await assert.rejects(me.topup(created.id, 1_000), OutcomeUnknownError);
      assert.equal(fake.requests.length - before, 1, 'never repeated on its own');
    } finally {
      fake.hang = undefined;
    }
  });

  test('a service that cannot be reached is unavailable, even for a POST (nothing was sent)', async () => {
    const closed = await new FakeCardService().listen();
    const url = closed.url;
    await closed.close();
    const me = createRemoteCardClient({ baseUrl: url, timeoutMs: 500, getRetries: 0 }).as('t');
    await assert.rejects(me.topup('00000000-0000-4000-8000-000000000000', 1_000), ServiceUnavailableError);
    await assert.rejects(me.walletBalance(), ServiceUnavailableError);
  });
});

describe('remote card-service client against our own /api/v1', () => {
  let api: TestApi;
  before(async () => {
    api = await startTestApi();
  });
  after(() => api.close());

  test('its extensions are found and used: the card list and the top-up quote', async () => {
    const alice = await newCustomer(api.t, 100_000);
    const c = createRemoteCardClient({ baseUrl: api.baseUrl, timeoutMs: 2_000 });
    const me = c.as(alice.token);
    const bins = await me.listBins();
    const plans = await me.listPlans();
    const bin = bins.find((b) => b.initialBalance === 0)!;
    const created = await me.createCard({ binId: bin.id, name: 'Ours', planId: plans[0]!.id });
    assert.equal(created.status, 'active');
    const listed = await me.listCards();
    assert.deepEqual(
      listed?.map((card) => card.id),
      [created.id],
    );
    const quote = await me.quoteTopup(created.id, 1_000);
    assert.ok(quote !== undefined && quote.totalCharged > 1_000);
    const topup = await me.topup(created.id, 1_000);
    assert.equal(topup.totalCharged, quote.totalCharged);
    assert.deepEqual(c.capabilities(), { listCards: 'present', topupQuote: 'present', otpRequest: 'unknown' });
    await refusedWith(me.topup(created.id, 1_000), 'TOPUP_COOLDOWN');
    await refusedWith(me.getCard('00000000-0000-4000-8000-000000000000'), 'CARD_NOT_FOUND');
    await refusedWith(c.as('vc_not-a-token').walletBalance(), 'INVALID_TOKEN');
  });

  test('the quote carries the refusal the top-up would give, in our codes with their figures, and starts no cooldown', async () => {
    const bob = await newCustomer(api.t, 10_000);
    const c = createRemoteCardClient({ baseUrl: api.baseUrl, timeoutMs: 2_000 });
    const me = c.as(bob.token);
    const bin = (await me.listBins()).find((b) => b.initialBalance === 0)!;
    const plan = (await me.listPlans())[0]!;
    const created = await me.createCard({ binId: bin.id, name: 'Quoted', planId: plan.id });
    const wallet = (await me.walletBalance()).balance;
    // More than the wallet holds: refused before any top-up, with the figures and the most that would pass.
    const over = await me.quoteTopup(created.id, wallet);
    assert.equal(over?.refusal?.code, 'INSUFFICIENT_WALLET_BALANCE');
    assert.deepEqual(over.refusal.params, { total: over.totalCharged, amount: wallet, fee: over.platformFee, available: wallet });
    assert.ok(over.maxAmount !== undefined && over.maxAmount > 0 && over.maxAmount < wallet, String(over.maxAmount));
    assert.equal(over.cooldownSeconds, 0);
    // Quoting was no attempt: the top-up of what fits goes through; then the quote names the cooldown it started.
    const fits = await me.quoteTopup(created.id, 1_000);
    assert.equal(fits?.refusal, undefined);
    await me.topup(created.id, 1_000);
    const cooling = await me.quoteTopup(created.id, 1_000);
    assert.equal(cooling?.refusal?.code, 'TOPUP_COOLDOWN');
    const seconds = (cooling.refusal.params as { seconds: number }).seconds;
    assert.ok(seconds > 0 && seconds <= 120 && cooling.cooldownSeconds === seconds, String(seconds));
  });

  test('the quote is a read: retried while the service fails, and a lost answer is "unavailable", never "outcome unknown"', async () => {
    const carol = await newCustomer(api.t, 10_000);
    const [bin] = await createRemoteCardClient({ baseUrl: api.baseUrl, timeoutMs: 2_000 }).as(carol.token).listBins();
    const card = await createRemoteCardClient({ baseUrl: api.baseUrl, timeoutMs: 2_000 })
      .as(carol.token)
      .createCard({ binId: bin!.id, name: 'Flaky', planId: 1 });
    let quotes = 0;
    const flaky = createRemoteCardClient({
      baseUrl: api.baseUrl,
      timeoutMs: 2_000,
      retryDelayMs: 1,
      fetch: (input, init) => {
        if (String(input).endsWith('/topup/quote') && ++quotes === 1)
          return Promise.resolve(new Response(JSON.stringify({ success: false, message: 'Bad gateway' }), { status: 502 }));
        return fetch(input, init);
      },
    });
    assert.ok((await flaky.as(carol.token).quoteTopup(card.id, 1_000))?.totalCharged);
    assert.equal(quotes, 2, 'the failed quote was asked again');
    const lost = createRemoteCardClient({
      baseUrl: api.baseUrl,
      timeoutMs: 2_000,
      getRetries: 0,
      fetch: (input, init) =>
        String(input).endsWith('/topup/quote')
          ? Promise.reject(Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }))
          : fetch(input, init),
    });
    await assert.rejects(lost.as(carol.token).quoteTopup(card.id, 1_000), ServiceUnavailableError);
  });
});

describe('remote card-service client: link checks and the request timeout', () => {
  let server: Server;
  let url: string;
  const seen: string[] = [];
  let status = 429;
  before(async () => {
    server = createServer((request, response) => {
      seen.push(`${request.method} ${request.url}`);
      response.writeHead(status, { 'content-type': 'application/json', 'retry-after': '1' });
      response.end(
        JSON.stringify(status === 200 ? { success: true, data: { balance: 1 } } : { success: false, message: 'Too Many Requests' }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a link check (the health check with a token) that gets a 429 is not tried again: the service is busy', async () => {
    status = 429;
    seen.length = 0;
    const me = createRemoteCardClient({ baseUrl: url, timeoutMs: 2_000, retryDelayMs: 1 }).as('t');
    await assert.rejects(me.checkToken(), (error: unknown) => {
      assert.ok(error instanceof ServiceBusyError, String(error));
      assert.equal(error.status, 429);
      return true;
    });
    assert.deepEqual(seen, ['GET /api/v1/health']);
    // The same health check of a linked user's token (a 401 asked about again) is a read like the others, retried.
    seen.length = 0;
    await assert.rejects(me.health(), ServiceUnavailableError);
    assert.equal(seen.length, 3);
    // Another read is retried as before.
    seen.length = 0;
    await assert.rejects(me.walletBalance(), ServiceUnavailableError);
    assert.equal(seen.length, 3);
  });

  test('the timeout covers the wait for a turn: a POST still waiting is never sent, and is unavailable, not of unknown outcome', async () => {
    status = 200;
    seen.length = 0;
    const budget = createRequestBudget({ maxPerSecond: 1 });
    const me = createRemoteCardClient({ baseUrl: url, timeoutMs: 300, retryDelayMs: 1, schedule: budget.schedule }).as('t');
    await me.walletBalance();
    const started = performance.now();
    await assert.rejects(me.topup('00000000-0000-4000-8000-000000000000', 1_000), (error: unknown) => {
      assert.ok(error instanceof ServiceUnavailableError, String(error));
      return true;
    });
    await assert.rejects(me.walletBalance(), ServiceUnavailableError);
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 900, `both given up within their timeouts (${elapsed.toFixed(0)} ms), not at their turns nor tried again`);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    assert.deepEqual(seen, ['GET /api/v1/wallet/balance'], 'neither was sent later');
  });
});
