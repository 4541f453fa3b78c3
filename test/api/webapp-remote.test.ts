import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createHttpServer } from '../../src/api/server.js';
import type { CoreRuntime } from '../../src/app/compose.js';
import type { RemoteMode } from '../../src/app/remote-mode.js';
import { remoteUserIdOf } from '../../src/bot/card-service/remote.js';
import { saveLink } from '../../src/bot/store/chat-links.js';
import { botTables } from '../../src/bot/store/tables.js';
import { webAppBotSide } from '../../src/bot/webapp.js';
import { issueWebAppNonce } from '../../src/bot/webapp-nonces.js';
import { hashToken } from '../../src/core/keys/secrets.js';
import { systemClock } from '../../src/infra/clock.js';
import { createLogger } from '../../src/infra/logger.js';
import { createRemoteCardClient } from '../../src/remote/client.js';
import type { BotApiServer, StoredMessage } from '../helpers/bot-api-server.js';
import { FakeCardService } from '../helpers/fake-card-service.js';
import { signInitData } from '../helpers/init-data.js';
import { type RemoteBot, startRemoteBot } from '../helpers/remote-bot.js';
import { assertNotLogged } from '../helpers/log.js';

// The card-details Mini App in remote mode (CARD_SERVICE_URL): the HTTP listener serves no /api/v1 of its
// own but still the bot's Mini App, whose details come through the bot's port from the service's 4.10.

const BOT_TOKEN = '123456:WEBAPP-remote-token';
const UNIFORM = 'Card details are not available';

describe('the Mini App in remote mode, over a service written from the spec', { timeout: 60_000 }, () => {
  let fake: FakeCardService;
  let bot: RemoteBot;
  let runtime: CoreRuntime;
  let remote: RemoteMode;
  let server: BotApiServer;
  let app: FastifyInstance;
  let baseUrl: string;
  const logs: string[] = [];

  before(async () => {
    fake = await new FakeCardService().listen();
    bot = await startRemoteBot({
      serviceUrl: fake.url,
      logger: createLogger('trace', { write: (line: string) => void logs.push(line) }),
      settings: { CARD_SERVICE_TIMEOUT_MS: '1000', WEBAPP_URL: 'https://cards.example/webapp', BOT_TOKEN },
      bot: { token: BOT_TOKEN, webAppUrl: 'https://cards.example/webapp' },
      // The HTTP listener as remote mode serves it: no /api/v1, the Mini App through the bot's port.
      beforeBot: async (started) => {
        app = createHttpServer({
          core: started.runtime.core,
          db: started.runtime.database.db,
          clock: systemClock,
          logger: createLogger('trace', { write: (line: string) => void logs.push(line) }),
          cardApi: false,
          webApp: {
            url: started.config.WEBAPP_URL!,
            botToken: BOT_TOKEN,
            showSeconds: 60,
            bot: webAppBotSide({ cards: started.remote.cards, db: started.runtime.database.db }),
          },
        });
        await app.listen({ host: '127.0.0.1', port: 0 });
        baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      },
    });
    ({ runtime, remote, server } = bot);
  });

  after(async () => {
    await bot?.stop();
    await app?.close();
    await fake?.close();
  });

  /** A user of the service with a card there, linked in chat `chatId` as the bot links one (the token sealed). */
  async function linkedWithCard(chatId: number) {
    const token = fake.addUser('earlier');
    const me = createRemoteCardClient({ baseUrl: fake.url, timeoutMs: 2_000 }).as(token);
    const [bin] = await me.listBins();
    const card = await me.createCard({ binId: bin!.id, name: `Card ${chatId}`, planId: 1 });
    fake.activate(card.id);
    const tokenHash = hashToken(token);
    const sealedToken = remote.cards.sealToken!(token, chatId);
    await saveLink(botTables(runtime.database.db), { chatId, userId: remoteUserIdOf(tokenHash), tokenHash, sealedToken }, new Date());
    const nonce = (cardId = card.id) =>
      issueWebAppNonce(runtime.database.db, { cardId, telegramUserId: chatId, chatId, tokenHash }, new Date());
    return { token, cardId: card.id, nonce };
  }

  async function post(body: unknown) {
    const response = await fetch(`${baseUrl}/webapp/card-details`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  }

  const refusedChecks = () =>
    logs
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.msg === 'Mini App card details refused')
      .map((entry) => entry.check);

  it("serves the page and the card's number, CVV and expiry from the service's sensitive details (4.10)", async () => {
    const alice = await linkedWithCard(3101);
    const page = await fetch(`${baseUrl}/webapp`);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type')!, /^text\/html/);
    assert.equal((await fetch(`${baseUrl}/api/v1/health`, { headers: { authorization: `Bearer ${alice.token}` } })).status, 404);
    const reply = await post({ initData: signInitData(BOT_TOKEN, { id: 3101 }, new Date()), nonce: await alice.nonce() });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const card = fake.cards.get(alice.cardId)!;
    assert.deepEqual(reply.body.data, { name: card.name, number: card.pan, cvv: card.cvv, expiry: card.exp, showSeconds: 60 });
    assert.ok(fake.requests.some((r) => r.method === 'GET' && r.path === `/api/v1/cards/${alice.cardId}/details`));
  });

  it("someone else's card, a service that is down, a token the service stopped taking: the same refusal", async () => {
    const bob = await linkedWithCard(3102);
    const carol = await linkedWithCard(3103);
    const initData = () => signInitData(BOT_TOKEN, { id: 3102 }, new Date());
    const before = refusedChecks().length;
    // Carol's card, drawn in Bob's chat: the service calls it not found for Bob's token.
    assert.equal((await post({ initData: initData(), nonce: await bob.nonce(carol.cardId) })).status, 403);
    fake.down = true;
    try {
      const down = await post({ initData: initData(), nonce: await bob.nonce() });
      assert.equal(down.status, 403);
      assert.equal(down.body.message, UNIFORM);
    } finally {
      fake.down = false;
    }
    fake.revoke(bob.token);
    assert.equal((await post({ initData: initData(), nonce: await bob.nonce() })).status, 403);
    assert.deepEqual(refusedChecks().slice(before), ['card', 'service', 'token']);
  });

  it("the remote bot's Details opens the Mini App, which shows the service's details; none of them enter the chat", async () => {
    const token = fake.addUser('current');
    const me = createRemoteCardClient({ baseUrl: fake.url, timeoutMs: 2_000 }).as(token);
    const [bin] = await me.listBins();
    const card = await me.createCard({ binId: bin!.id, name: 'Mini', planId: 1 });
    const dora = server.user(3104);
    let step = dora.send(`/link ${token}`);
    await server.nextMessage(dora.chatId, step.mark, 'Linked');
    step = dora.send(`/addcard ${card.id}`);
    const view: StoredMessage = await server.nextMessage(dora.chatId, step.mark, 'Status: active');
    const details = (view.replyMarkup?.inline_keyboard.flat() ?? []).find((b) => b.text.includes('Details')) as
      | { web_app?: { url: string } }
      | undefined;
    assert.ok(details?.web_app, 'Details is a Mini App button');
    const nonce = new URL(details.web_app.url).searchParams.get('nonce');
    const reply = await post({ initData: signInitData(BOT_TOKEN, { id: 3104 }, new Date()), nonce });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    const held = fake.cards.get(card.id)!;
    assert.equal(reply.body.data.number, held.pan);
    assert.ok(!server.calls.some((c) => JSON.stringify(c.payload).includes(held.pan)), 'the number never entered the chat');
  });

  it('no card number, CVV or token reaches the log', () => {
    const cards = [...fake.cards.values()];
    assertNotLogged(logs.join('\n'), [...fake.users.keys(), ...cards.flatMap((c) => [c.pan])]);
    for (const { cvv } of cards) assert.doesNotMatch(logs.join('\n'), new RegExp(`cvv\\W{0,4}${cvv}\\b`, 'i'));
  });
});
