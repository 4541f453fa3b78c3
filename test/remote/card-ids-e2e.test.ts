import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/infra/logger.js';
import type { BotApiServer } from '../helpers/bot-api-server.js';
import { FakeCardService } from '../helpers/fake-card-service.js';
import { type RemoteBot, startRemoteBot } from '../helpers/remote-bot.js';

// Issue 31, item 3: a card id is a UUID or nothing is asked of the service. `/addcard ..` became a request for
// `/api/v1/cards/..` (and a freeze of it `PATCH /api/v1/freeze`); `:` splits the bot's button data; a long id
// loses its pushes. The chat says the card is not found, in the user's language.

describe('remote mode: /addcard with an id that is not a card id', { timeout: 60_000 }, () => {
  let fake: FakeCardService;
  let bot: RemoteBot;
  let server: BotApiServer;

  before(async () => {
    fake = await new FakeCardService().listen();
    bot = await startRemoteBot({ serviceUrl: fake.url, logger: createLogger('silent') });
    server = bot.server;
  });
  after(async () => {
    await bot?.stop();
    await fake?.close();
  });

  it('is refused before any request, with a clear answer in English and Russian', async () => {
    for (const [user, expected] of [
      [server.user(9501), 'Card not found or access denied. Open your cards with /cards.'],
      [server.user(9502, { languageCode: 'ru' }), 'Карта не найдена или доступ запрещён. Откройте карты: /cards.'],
    ] as const) {
      let step = user.send(fake.addUser('current'));
      await server.nextMessage(user.chatId, step.mark, /Linked|привязан/);
      const before = fake.requests.length;
      for (const id of ['..', '../..', 'a:b', `6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b:x`, 'x'.repeat(120), '%2e%2e']) {
        step = user.send(`/addcard ${id}`);
        const answer = await server.nextMessage(user.chatId, step.mark);
        assert.equal(answer.text, expected, `/addcard ${id.slice(0, 40)}`);
      }
      assert.deepEqual(
        fake.requests.slice(before).filter((r) => !r.path.startsWith('/api/v1/cards/transactions?')),
        [],
        "nothing was asked of the service (but the watcher's polls of transactions)",
      );
    }
  });
});
