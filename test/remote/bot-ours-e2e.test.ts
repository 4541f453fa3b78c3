import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/infra/logger.js';
import type { BotApiServer } from '../helpers/bot-api-server.js';
import { newCard, newCustomer } from '../helpers/core.js';
import { startTestApi, type TestApi } from '../helpers/http.js';
import { type RemoteBot, startRemoteBot } from '../helpers/remote-bot.js';

// Remote mode in front of a service that has the top-up quote (our own /api/v1, in this process): the bot
// shows the refusal the top-up would meet before Confirm, as it does over the embedded core, and quoting
// starts no cooldown at the service.

describe('remote mode in front of a service with the top-up quote', { timeout: 120_000 }, () => {
  let api: TestApi;
  let bot: RemoteBot;
  let server: BotApiServer;

  before(async () => {
    api = await startTestApi();
    bot = await startRemoteBot({
      serviceUrl: api.baseUrl,
      logger: createLogger('silent'),
      settings: { CARD_SERVICE_POLL_SECONDS: '5' },
      bot: { token: '123456:REMOTE-ours' },
    });
    server = bot.server;
  });

  after(async () => {
    await bot?.stop();
    await api?.close();
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
