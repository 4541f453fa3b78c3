import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type RunningBot, startBot } from '../../src/bot/index.js';
import { type CoreRuntime, startCore } from '../../src/app/compose.js';
import { loadConfig } from '../../src/app/config.js';
import { systemClock } from '../../src/infra/clock.js';
import { createLogger } from '../../src/infra/logger.js';
import { type RemoteMode, startRemoteMode } from '../../src/app/remote-mode.js';
import { BotApiServer } from '../helpers/bot-api-server.js';
import { newCard, newCustomer, TEST_CARD_DATA_KEY } from '../helpers/core.js';
import { startTestApi, type TestApi } from '../helpers/http.js';

// Remote mode in front of a service that has the top-up quote (our own /api/v1, in this process): the bot
// shows the refusal the top-up would meet before Confirm, as it does over the embedded core, and quoting
// starts no cooldown at the service.

describe('remote mode in front of a service with the top-up quote', { timeout: 120_000 }, () => {
  let dir: string;
  let server: BotApiServer;
  let api: TestApi;
  let runtime: CoreRuntime;
  let remote: RemoteMode;
  let running: RunningBot;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'remote-ours-e2e-'));
    server = new BotApiServer();
    const apiRoot = await server.start();
    api = await startTestApi();
    runtime = await startCore({ databaseUrl: path.join(dir, 'bot.db'), cardDataKey: TEST_CARD_DATA_KEY, clock: systemClock });
    const config = loadConfig({ CARD_SERVICE_URL: api.baseUrl, CARD_SERVICE_TIMEOUT_MS: '5000', CARD_SERVICE_POLL_SECONDS: '5' });
    const logger = createLogger('silent');
    remote = startRemoteMode(config, runtime, logger);
    running = await startBot({
      cards: remote.cards,
      cipher: runtime.cipher,
      db: runtime.database.db,
      clock: systemClock,
      logger,
      config: { token: '123456:REMOTE-ours', apiRoot, sensitiveTtlSeconds: 60, otpTtlSeconds: 60, pollIntervalMs: 100, rateLimit: false },
    });
  });

  after(async () => {
    await running?.stop();
    await remote?.stop();
    await runtime?.close();
    await api?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** When the service last counted a top-up attempt on the card (null: never). */
  const lastAttempt = async (cardId: string) =>
    (await api.t.database.db.selectFrom('cards').select('last_topup_attempt_at').where('id', '=', cardId).executeTakeFirstOrThrow())
      .last_topup_attempt_at;

  it("an amount over the wallet, then the card's cooldown, are refused before Confirm, in the quote's words", async () => {
    const customer = await newCustomer(api.t, 5_000);
    const card = await newCard(api.t, customer, 'Quoted');
    const user = server.user(9301);
    let step = user.send(`/link ${customer.token}`);
    await server.nextMessage(user.chatId, step.mark, 'Linked');
    step = user.send('/cards');
    const list = await server.nextMessage(user.chatId, step.mark, 'Your cards');
    let press = user.press(list, 'Quoted');
    const view = await server.nextEdit(user.chatId, press.mark, 'Status: active');

    // The most the wallet allows (fee included) is offered, and more is refused at once, with no Confirm.
    press = user.press(view, 'Top up');
    const ask = await server.nextMessage(user.chatId, press.mark, 'How much to top up');
    assert.doesNotMatch(ask.text, /10,000\.00/, 'the most this card can take now, not the service-wide maximum');
    step = user.send('100');
    const refused = await server.nextMessage(user.chatId, step.mark, 'Insufficient wallet balance');
    assert.match(refused.text, /The most you can top up now is \$\d+\.\d\d/);
    assert.equal(await lastAttempt(card.id), null, 'the quote was no attempt: no cooldown started');

    step = user.send('10');
    const quote = await server.nextMessage(user.chatId, step.mark, 'Total charged to the wallet');
    press = user.press(quote, 'Confirm');
    await server.nextEdit(user.chatId, press.mark, /Topped up \$10\.00/);
    assert.notEqual(await lastAttempt(card.id), null);

    // The cooldown that top-up started: said when Top up is pressed, before any amount or Confirm.
    press = user.press(view, 'Top up');
    const cooling = await server.nextMessage(user.chatId, press.mark, /Please wait|How much to top up/);
    assert.match(cooling.text, /Please wait/);
  });
});
