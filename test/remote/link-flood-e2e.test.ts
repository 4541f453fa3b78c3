import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createLogger } from '../../src/infra/logger.js';
import type { BotApiServer, ScriptedUser } from '../helpers/bot-api-server.js';
import { FakeCardService } from '../helpers/fake-card-service.js';
import { type RemoteBot, startRemoteBot } from '../helpers/remote-bot.js';
import { eventually } from '../helpers/wait.js';

// Issue 31, item 2: in an unlinked chat any 16–200-character text is a token check at the card service (its
// health check with that token). Strangers flooding the bot with such texts must not starve the budget the
// linked users share: their checks get a small lane of their own, a few a minute per chat, a short queue
// that refuses at once, and the linked users' taps and watched cards go first. The bot runs as `npm start`
// builds it in remote mode, over the Bot API test server, with a budget of 5 requests a second.

const FLOOD_CHATS = 9;
const FLOOD_PER_SECOND = 30;
const FLOOD_MS = 4_000;

describe('remote mode: strangers flooding the bot with token checks', { timeout: 120_000 }, () => {
  let fake: FakeCardService;
  let bot: RemoteBot;
  let server: BotApiServer;

  before(async () => {
    fake = await new FakeCardService().listen();
    bot = await startRemoteBot({
      serviceUrl: fake.url,
      logger: createLogger('silent'),
      settings: { CARD_SERVICE_MAX_RPS: '5', CARD_SERVICE_POLL_SECONDS: '5' },
    });
    server = bot.server;
  });
  after(async () => {
    await bot?.stop();
    await fake?.close();
  });

  /** A card made at the service directly (not through the bot), as the service's own site would. */
  async function cardAtService(token: string): Promise<string> {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const bins = (await (await fetch(`${fake.url}/api/v1/bins`, { headers })).json()) as { data: { id: string }[] };
    const created = await fetch(`${fake.url}/api/v1/cards`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ bin_id: bins.data[0]!.id, name: 'Flooded', planId: 1 }),
    });
    return ((await created.json()) as { data: { id: string } }).data.id;
  }

  it("a linked user's taps are answered within 1 s and a watched card's code arrives within 2 s", async (t) => {
    // Alice: linked, a card added by id and watched for a code.
    const alice = server.user(9301);
    const token = fake.addUser('current', 100_000);
    let step = alice.send(token);
    const menu = await server.nextMessage(alice.chatId, step.mark, 'Linked');
    const cardId = await cardAtService(token);
    step = alice.send(`/addcard ${cardId}`);
    const view = await server.nextMessage(alice.chatId, step.mark, 'Status: active');
    const otpPolls = () => fake.requests.filter((r) => r.path === `/api/v1/cards/${cardId}/otps`).length;
    const waiting = alice.press(view, 'Waiting for a code');
    await server.waitForCall((c) => c.method === 'answerCallbackQuery' && c.payload.callback_query_id === waiting.queryId, waiting.mark);
    // Its codes so far are read (as history) before the flood begins.
    await eventually('the watched card is polled', () => otpPolls() > 0);

    // The flood: nine strangers, 30 texts a second between them, each shaped like a token; a third write in Russian.
    const strangers: ScriptedUser[] = Array.from({ length: FLOOD_CHATS }, (_, i) =>
      server.user(9400 + i, { languageCode: i % 3 === 0 ? 'ru' : 'en' }),
    );
    const healthBefore = fake.requests.filter((r) => r.path === '/api/v1/health').length;
    const floodMark = server.mark();
    const sent = new Map<number, number>();
    const flooding = (async () => {
      const started = Date.now();
      for (let i = 0; Date.now() - started < FLOOD_MS; i++) {
        const stranger = strangers[i % FLOOD_CHATS]!;
        stranger.send(randomBytes(18).toString('base64url'));
        sent.set(stranger.chatId, (sent.get(stranger.chatId) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, 1_000 / FLOOD_PER_SECOND));
      }
    })();

    /** Alice taps Wallet (a request to the service) then Menu; returns how long the Wallet answer took, ms. */
    async function tapWallet(): Promise<number> {
      const press = alice.press(menu, 'Wallet');
      const pressedAt = Date.now();
      const answered = await server.waitForCall(
        (c) =>
          c.ok &&
          c.method === 'editMessageText' &&
          Number(c.payload.chat_id) === alice.chatId &&
          /Wallet balance/.test(String(c.payload.text)),
        press.mark,
      );
      const back = alice.press(menu, 'Menu');
      await server.nextEdit(alice.chatId, back.mark, 'Main menu');
      return answered.at - pressedAt;
    }

    await new Promise((resolve) => setTimeout(resolve, 700));
    const taps = [await tapWallet()];
    // A code arrives on the watched card in the middle of the flood.
    const otpMark = server.mark();
    const otp = fake.addOtp(cardId);
    const otpAt = Date.now();
    const pushed = server.waitForCall(
      (c) => c.ok && c.method === 'sendMessage' && Number(c.payload.chat_id) === alice.chatId && String(c.payload.text).includes(otp.code),
      otpMark,
      20_000,
      'the code pushed to the chat',
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    taps.push(await tapWallet());
    const otpLatency = (await pushed).at - otpAt;
    taps.push(await tapWallet());
    await flooding;

    t.diagnostic(`code pushed after ${otpLatency} ms; taps answered in ${taps.join(', ')} ms`);
    assert.ok(otpLatency < 2_000, `the code reached the chat ${otpLatency} ms after it arrived`);
    for (const tap of taps) assert.ok(tap < 1_000, `Alice's taps were answered in ${taps.join(', ')} ms`);

    // Every stranger's text is answered, and none of them got more than a few checks a minute at the service.
    const total = [...sent.values()].reduce((a, b) => a + b, 0);
    const repliesTo = (chatId: number) =>
      server.calls.slice(floodMark).filter((c) => c.ok && c.method === 'sendMessage' && Number(c.payload.chat_id) === chatId);
    await eventually('every junk text is answered', () => strangers.every((s) => repliesTo(s.chatId).length >= sent.get(s.chatId)!), {
      timeoutMs: 20_000,
      seen: () => strangers.map((s) => `${repliesTo(s.chatId).length}/${sent.get(s.chatId)}`).join(' '),
    });
    const checks = fake.requests.filter((r) => r.path === '/api/v1/health').length - healthBefore;
    t.diagnostic(`${total} junk texts, ${checks} token checks at the service`);
    assert.ok(checks <= FLOOD_CHATS * 3, `${checks} token checks reached the service for ${total} junk texts`);
    const texts = strangers.flatMap((s) => repliesTo(s.chatId).map((c) => String(c.payload.text)));
    assert.ok(
      texts.some((t) => t.startsWith('Too many tries to link this chat. Wait ')),
      'a chat over its attempts is told to wait',
    );
    assert.ok(
      texts.some((t) => t.startsWith('Слишком много попыток привязать этот чат. Подождите ')),
      'in Russian too',
    );
    assert.ok(
      texts.some((t) => t.startsWith('The card service is busy: the token was not checked.')),
      'a check the lane has no room for is refused at once, with the reason',
    );
    // Each text was a check refused, a chat told to wait, or a busy service: never silence, never anything else.
    const known =
      /^(Invalid or missing API token|API-токен неверен|Too many tries|Слишком много попыток|The card service is busy|Карточный сервис занят)/;
    const others = texts.filter((t) => !known.test(t));
    assert.deepEqual(others, []);
  });
});
