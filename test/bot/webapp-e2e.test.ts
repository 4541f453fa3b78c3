import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createHttpServer } from '../../src/api/server.js';
import type { RunningBot } from '../../src/bot/runtime/running-bot.js';
import { startBot } from '../../src/bot/runtime/start-polling.js';
import { startCore, type CoreRuntime } from '../../src/app/compose.js';
import { systemClock } from '../../src/infra/clock.js';
import { createLogger } from '../../src/infra/logger.js';
import type { Caller } from '../../src/core/operations/views.js';
import { BotApiServer, type ScriptedUser, type StoredMessage } from '../helpers/bot-api-server.js';
import { TEST_CARD_DATA_KEY } from '../helpers/core.js';
import { signInitData } from '../helpers/init-data.js';
import { embeddedWebApp } from '../helpers/webapp.js';

const BOT_TOKEN = '123456:WEBAPP-e2e-token';
const WEBAPP_URL = 'https://cards.example/webapp';

type Button = { text: string; callback_data?: string; web_app?: { url: string } };
const buttons = (m: StoredMessage) => (m.replyMarkup?.inline_keyboard.flat() ?? []) as Button[];
const detailsButton = (m: StoredMessage) => buttons(m).find((b) => b.text.includes('Details'))!;

/** A polling bot over the Bot API test server, on a fresh database, with `WEBAPP_URL` set or not. */
function botOverTestServer(webAppUrl: string | undefined) {
  const env = {} as { dir: string; server: BotApiServer; runtime: CoreRuntime; running: RunningBot };
  before(async () => {
    env.dir = mkdtempSync(path.join(tmpdir(), 'webapp-e2e-'));
    env.server = new BotApiServer();
    const apiRoot = await env.server.start();
    env.runtime = await startCore({ databaseUrl: path.join(env.dir, 'cards.db'), cardDataKey: TEST_CARD_DATA_KEY, clock: systemClock });
    env.running = await startBot({
      core: env.runtime.core,
      cipher: env.runtime.cipher,
      db: env.runtime.database.db,
      clock: systemClock,
      logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
      config: { token: BOT_TOKEN, apiRoot, sensitiveTtlSeconds: 60, otpTtlSeconds: 60, pollIntervalMs: 100, rateLimit: false, webAppUrl },
    });
  });
  after(async () => {
    await env.running?.stop();
    await env.server?.stop();
    await env.runtime?.close();
    rmSync(env.dir, { recursive: true, force: true });
  });
  return env;
}

/** Links user 1001 with a new token and gives it a card; returns the card's view, drawn from /cards. */
async function cardViewOf(
  env: ReturnType<typeof botOverTestServer>,
): Promise<{ alice: ScriptedUser; view: StoredMessage; cardId: string; caller: Caller }> {
  const { server, runtime } = env;
  const { token } = await runtime.admin.createUser({ name: 'Alice', deposit: 100_000 });
  const alice = server.user(1001);
  const linking = alice.send(token);
  await server.nextMessage(alice.chatId, linking.mark, 'Linked');
  const caller = await runtime.core.authenticate(token);
  const [bin] = await runtime.core.listBins();
  const [plan] = await runtime.core.listPlans();
  const card = await runtime.core.createCard(caller, { bin_id: bin!.id, planId: plan!.id, name: 'Ads' });
  const cards = alice.send('/cards');
  const list = await server.nextMessage(alice.chatId, cards.mark, 'Your cards');
  const press = alice.press(list, 'Ads');
  return { alice, view: await server.nextEdit(alice.chatId, press.mark, 'Balance'), cardId: card.id, caller };
}

describe('with WEBAPP_URL, Details opens the Mini App', () => {
  const env = botOverTestServer(WEBAPP_URL);
  let api: FastifyInstance;
  before(async () => {
    api = createHttpServer({
      core: env.runtime.core,
      db: env.runtime.database.db,
      clock: systemClock,
      logger: createLogger('silent'),
      webApp: {
        url: WEBAPP_URL,
        botToken: BOT_TOKEN,
        showSeconds: 60,
        bot: embeddedWebApp({ core: env.runtime.core, db: env.runtime.database.db, clock: systemClock }),
      },
    });
    await api.ready();
  });
  after(() => api?.close());

  const detailsWith = (url: string, user = 1001) =>
    api.inject({
      method: 'POST',
      url: '/webapp/card-details',
      payload: { initData: signInitData(BOT_TOKEN, { id: user }, new Date()), nonce: new URL(url).searchParams.get('nonce') },
    });

  let drawn: Awaited<ReturnType<typeof cardViewOf>>;

  it("the card view's Details is a web_app button whose address carries a one-time nonce for this card", async () => {
    drawn = await cardViewOf(env);
    const button = detailsButton(drawn.view);
    assert.equal(button.callback_data, undefined);
    const url = new URL(button.web_app!.url);
    assert.equal(`${url.origin}${url.pathname}`, WEBAPP_URL);
    assert.match(url.searchParams.get('nonce')!, /^[\w-]{43}$/);

    // The nonce opens the card's details once, for the user it was drawn for.
    assert.equal((await detailsWith(button.web_app!.url, 2002)).statusCode, 403);
    const served = await detailsWith(button.web_app!.url);
    assert.equal(served.statusCode, 200);
    const details = await env.runtime.core.getSensitiveDetails(drawn.caller, drawn.cardId);
    assert.equal(served.json().data.number, details.pan);
    assert.equal((await detailsWith(button.web_app!.url)).statusCode, 403);
    // Nothing about the card went into the chat.
    assert.ok(!env.server.calls.some((c) => JSON.stringify(c.payload).includes(details.pan)));
  });

  it('a view drawn without the Mini App button answers Details with one, never with the details in chat', async () => {
    const { server } = env;
    const { alice, view, cardId } = drawn;
    // As a flow redraws a view (conversations draw the plain button): Details pressed as a callback.
    const press = alice.pressData(view, `c:details:${cardId}`);
    const offer = await server.nextMessage(alice.chatId, press.mark, 'Press the button');
    const button = buttons(offer)[0]!;
    assert.match(button.web_app!.url, /^https:\/\/cards\.example\/webapp\?nonce=[\w-]{43}$/);
    assert.equal((await detailsWith(button.web_app!.url)).statusCode, 200);
    await server.waitForCall((c) => c.method === 'answerCallbackQuery' && c.payload.callback_query_id === press.queryId, press.mark);
    // The offer goes when its nonce would have expired: its deletion is stored.
    const deletion = await env.runtime.database.db
      .withTables<{ bot_pending_deletions: { chat_id: number; message_id: number } }>()
      .selectFrom('bot_pending_deletions')
      .selectAll()
      .where('message_id', '=', offer.messageId)
      .executeTakeFirst();
    assert.ok(deletion);
    assert.ok(!server.calls.slice(press.mark).some((c) => c.method === 'sendMessage' && String(c.payload.text).includes('Card details')));
  });
});

describe('without WEBAPP_URL, Details sends the self-deleting message', () => {
  const env = botOverTestServer(undefined);

  it("the card view's Details is a callback button, and pressing it sends the protected details", async () => {
    const { alice, view } = await cardViewOf(env);
    const button = detailsButton(view);
    assert.equal(button.web_app, undefined);
    assert.match(button.callback_data!, /^c:details:/);
    const press = alice.press(view, 'Details');
    const details = await env.server.nextMessage(alice.chatId, press.mark, 'Card details');
    assert.equal(details.protectContent, true);
    assert.equal(details.entities?.filter((e) => e.type === 'spoiler').length, 3);
  });
});
