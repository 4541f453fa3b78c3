import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type RunningHttpApi, startHttpApi } from '../../src/api/start.js';
import { type CoreRuntime, startCoreFromConfig } from '../../src/app/compose.js';
import { loadConfig } from '../../src/app/config.js';
import type { RunningBot } from '../../src/bot/runtime/running-bot.js';
import { startBot } from '../../src/bot/runtime/start-polling.js';
import { lithicThreeDsResponder, startThreeDsAnswers } from '../../src/core/provider/lithic-events/three-ds.js';
import { LithicClient } from '../../src/core/provider/lithic/lithic-client.js';
import { lithicEnroll } from '../../src/core/provider/lithic/lithic-operator.js';
import { systemClock } from '../../src/infra/clock.js';
import type { Loop } from '../../src/infra/loop.js';
import { createLogger } from '../../src/infra/logger.js';
import { BotApiServer, type StoredMessage } from '../helpers/bot-api-server.js';
import { type FakeLithic, startFakeLithic } from '../helpers/fake-lithic.js';
import { lithicOpenApiSkip } from '../helpers/lithic-openapi.js';
import { eventually } from '../helpers/wait.js';

// Issue 34 as a cardholder meets it, with Lithic behind the core (CARD_PROVIDER=lithic, LITHIC_API_URL at the fake
// Lithic): the card made in chat is issued at Lithic; a purchase simulated at Lithic is decided by our ASA route
// and held; its clearing, sent as Lithic's event, settles it and is pushed to the chat; a 3-D Secure challenge
// event is approved in chat and the answer reaches Lithic. The operator's enroll wires Lithic to our routes first.

const buttons = (m: StoredMessage) => m.replyMarkup?.inline_keyboard.flat().map((b) => b.text) ?? [];

describe('Lithic behind the bot, end to end (the fake Lithic, the Bot API test server)', { skip: lithicOpenApiSkip() }, () => {
  let fake: FakeLithic;
  let dir: string;
  let server: BotApiServer;
  let runtime: CoreRuntime;
  let running: RunningBot;
  let api: RunningHttpApi;
  let answers: Loop;

  before(async () => {
    fake = await startFakeLithic();
    dir = mkdtempSync(path.join(tmpdir(), 'lithic-e2e-'));
    // The operator's `provider lithic enroll --url`: Lithic learns our two routes and gives their secrets.
    const port = await freePort();
    const operator = new LithicClient({ apiKey: fake.apiKey, baseUrl: fake.url, timeoutMs: 5_000 });
    const enrolment = await lithicEnroll(operator, `http://127.0.0.1:${port}`);
    const config = loadConfig({
      DATABASE_URL: path.join(dir, 'cards.db'),
      CARD_DATA_KEY_FILE: path.join(dir, 'card-data.key'),
      CARD_PROVIDER: 'lithic',
      LITHIC_API_KEY: fake.apiKey,
      LITHIC_API_URL: fake.url,
      LITHIC_ASA_SECRET: enrolment.asaSecret,
      LITHIC_WEBHOOK_SECRET: enrolment.webhookSecret,
      HTTP_HOST: '127.0.0.1',
      HTTP_PORT: String(port),
    });
    const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
    runtime = await startCoreFromConfig(config, logger);
    server = new BotApiServer();
    const apiRoot = await server.start();
    running = await startBot({
      core: runtime.core,
      cipher: runtime.cipher,
      funding: runtime.funding,
      db: runtime.database.db,
      clock: systemClock,
      logger,
      config: { token: '123456:TEST-token', apiRoot, sensitiveTtlSeconds: 60, otpTtlSeconds: 60, pollIntervalMs: 100, rateLimit: false },
    });
    api = await startHttpApi({ runtime, config, logger });
    // The 3-D Secure answers' job, as src/app/run.ts starts it beside the bot and the API.
    answers = startThreeDsAnswers({ db: runtime.database.db, clock: systemClock }, lithicThreeDsResponder(runtime.lithic!), logger);
  });

  after(async () => {
    await answers?.stop();
    await api?.close();
    await running?.stop();
    await server?.stop();
    await runtime?.close();
    await fake?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a card made in chat is issued at Lithic; a purchase there is decided by our ASA route, held, settled by its clearing, pushed to the chat', async () => {
    const { token } = await runtime.admin.createUser({ name: 'Alice', deposit: 100_000 });
    const alice = server.user(6401);
    const menu = await server.nextMessage(alice.chatId, alice.send(token).mark, 'Linked');

    // The card made in chat, through the bot's own screens.
    let press = alice.press(menu, 'New card');
    const binPrompt = await server.nextMessage(alice.chatId, press.mark, 'Pick a BIN');
    press = alice.press(binPrompt, /./);
    const planPrompt = await server.nextMessage(alice.chatId, press.mark, 'Pick a plan');
    press = alice.press(planPrompt, /./);
    await server.nextMessage(alice.chatId, press.mark, 'Name the card');
    let step = alice.send('Games');
    const couponPrompt = await server.nextMessage(alice.chatId, step.mark, 'coupon');
    press = alice.press(couponPrompt, 'Skip');
    const summary = await server.nextMessage(alice.chatId, press.mark, 'Creation fee');
    press = alice.press(summary, 'Confirm');
    const view = await server.nextEdit(alice.chatId, press.mark, 'created');
    assert.match(view.text, /Games/);

    const [issued] = [...fake.cards.values()];
    assert.ok(issued, 'Lithic issued the card');
    assert.deepEqual([issued.type, issued.state, issued.memo], ['VIRTUAL', 'OPEN', 'Games']);
    const caller = await runtime.core.authenticate(token);
    const [card] = await runtime.core.listCards(caller);
    const row = await runtime.database.db
      .selectFrom('cards')
      .select('provider_card_id')
      .where('id', '=', card!.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.provider_card_id, issued.token, "the card's provider id is Lithic's card token");

    // Frozen and unfrozen in chat: paused and opened at Lithic. The details shown are read from Lithic.
    press = alice.press(view, 'Freeze');
    const frozen = await server.nextEdit(alice.chatId, press.mark, 'Status: frozen');
    assert.equal(issued.state, 'PAUSED');
    press = alice.press(frozen, 'Unfreeze');
    await server.nextEdit(alice.chatId, press.mark, 'Status: active');
    assert.equal(issued.state, 'OPEN');
    press = alice.press(frozen, 'Details');
    const details = await server.nextMessage(alice.chatId, press.mark, 'Card details');
    assert.ok(details.text.replace(/\s/g, '').includes(issued.pan), "the number is Lithic's");

    // Topped up in chat, then a purchase at Lithic: our ASA route approves and holds it.
    press = alice.press(view, 'Top up');
    await server.nextMessage(alice.chatId, press.mark, 'How much to top up');
    step = alice.send('50');
    const quote = await server.nextMessage(alice.chatId, step.mark, 'Platform fee');
    press = alice.press(quote, 'Confirm');
    await server.nextEdit(alice.chatId, press.mark, 'Balance');
    const before = (await runtime.core.listCards(caller))[0]!.balance;

    let mark = server.mark();
    const authorized = await fetchFake('/v1/simulate/authorize', { pan: issued.pan, amount: 1_250, descriptor: 'STEAM', mcc: '5816' });
    const transaction = fake.transactions.get(authorized.token)!;
    assert.equal(transaction.result, 'APPROVED', 'decided by our ASA route');
    const held = await server.nextMessage(alice.chatId, mark, 'Held');
    assert.match(
      held.text,
      new RegExp(`⏳ Held \\$12\\.50 at STEAM on “Games” \\(.*${issued.pan.slice(-4)}\\) until the merchant settles`),
    );
    const hold = await runtime.database.db
      .selectFrom('card_authorizations')
      .selectAll()
      .where('provider_transaction_id', '=', authorized.token)
      .executeTakeFirstOrThrow();
    assert.equal(Number(hold.amount), 1_250);

    // Lithic's clearing event settles the hold; the cardholder is told.
    mark = server.mark();
    await fetchFake('/v1/simulate/clearing', { token: authorized.token });
    const settled = await server.nextMessage(alice.chatId, mark, 'Debit');
    assert.match(settled.text, /💸 Debit \$12\.50 at STEAM on “Games”/);
    const cleared = await runtime.database.db
      .selectFrom('card_authorizations')
      .select(['status', 'cleared_amount'])
      .where('id', '=', hold.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual([cleared.status, Number(cleared.cleared_amount)], ['cleared', 1_250]);
    const after = (await runtime.core.listCards(caller))[0]!.balance;
    assert.equal(Number(before) - Number(after), 1_250, 'the purchase took $12.50 from the card');
    assert.deepEqual(
      fake.deliveries.map((d) => d.status),
      fake.deliveries.map(() => 200),
      'every event was taken',
    );
    assert.deepEqual(fake.problems, []);
  });

  it('a 3-D Secure challenge from Lithic is approved in chat and the answer reaches Lithic', async () => {
    const alice = server.user(6401);
    const [issued] = [...fake.cards.values()];
    const mark = server.mark();
    const simulated = await fetchFake('/v1/three_ds_authentication/simulate', {
      pan: issued!.pan,
      merchant: { id: 'OODKZAPJVN4YS7O', country: 'USA', mcc: '5816', name: 'STEAM' },
      transaction: { amount: 4_210, currency: 'USD' },
    });
    const push = await server.nextMessage(alice.chatId, mark, 'Approve $42.10 at STEAM?');
    assert.deepEqual(buttons(push), ['✅ Approve', '❌ Decline']);
    const tap = alice.press(push, 'Approve');
    await server.nextEdit(alice.chatId, tap.mark, '✅ Approved');
    answers.wake();
    await eventually('the answer reached Lithic', () => fake.challengeResponses.length > 0);
    assert.deepEqual(fake.challengeResponses, [{ token: simulated.token, challenge_response: 'APPROVE' }]);
    assert.deepEqual(fake.problems, []);
  });

  it('over the balance, our ASA route declines (INSUFFICIENT_FUNDS at Lithic) and the chat is told; a held purchase voided at Lithic is released', async () => {
    const alice = server.user(6401);
    const [issued] = [...fake.cards.values()];
    let mark = server.mark();
    const declined = await fetchFake('/v1/simulate/authorize', { pan: issued!.pan, amount: 900_000, descriptor: 'YACHTS', mcc: '4457' });
    assert.equal(fake.transactions.get(declined.token)!.result, 'INSUFFICIENT_FUNDS');
    const alert = await server.nextMessage(alice.chatId, mark, 'Declined');
    assert.match(alert.text, /Declined \$9,000\.00 at YACHTS on “Games”/);

    mark = server.mark();
    const held = await fetchFake('/v1/simulate/authorize', { pan: issued!.pan, amount: 700, descriptor: 'HOTEL' });
    await server.nextMessage(alice.chatId, mark, 'Held $7.00 at HOTEL');
    mark = server.mark();
    await fetchFake('/v1/simulate/void', { token: held.token });
    const released = await server.nextMessage(alice.chatId, mark, 'Released');
    assert.match(released.text, /Released \$7\.00 held for HOTEL on “Games”/);
    assert.deepEqual(fake.problems, []);
  });

  it("a digital wallet's code from Lithic is pushed to the chat as an OTP, once though Lithic sends it under both its event types", async () => {
    const alice = server.user(6401);
    const [issued] = [...fake.cards.values()];
    const mark = server.mark();
    await fetchFake('/v1/simulate/tokenizations', {
      pan: issued!.pan,
      cvv: issued!.cvv,
      expiration_date: `${issued!.expMonth}/${issued!.expYear.slice(-2)}`,
      tokenization_source: 'APPLE_PAY',
      wallet_recommended_decision: 'REQUIRE_ADDITIONAL_AUTHENTICATION',
    });
    const { code } = fake.walletCodes.at(-1)!;
    await server.nextMessage(alice.chatId, mark, code);
    const otps = await runtime.database.db.selectFrom('card_otps').select('code').where('code', '=', code).execute();
    assert.equal(otps.length, 1, 'the subscription takes one of the two event types');
    assert.deepEqual(fake.problems, []);
  });

  async function fetchFake(pathname: string, body: unknown): Promise<{ token: string }> {
    const response = await fetch(fake.url + pathname, {
      method: 'POST',
      headers: { authorization: fake.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 201, await response.clone().text());
    return (await response.json()) as { token: string };
  }
});

async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
