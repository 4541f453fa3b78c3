import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startBot } from '../src/bot/runtime/start-polling.js';
import { startCore } from '../src/app/compose.js';
import { loadConfig } from '../src/app/config.js';
import { systemClock } from '../src/infra/clock.js';
import { createLogger } from '../src/infra/logger.js';
import { createRemoteCardClient } from '../src/remote/client.js';
import { createKnownCards } from '../src/remote/known-cards.js';
import { remoteTables } from '../src/remote/tables.js';
import { startRemoteMode } from '../src/app/remote-mode.js';
import { BotApiServer } from '../test/helpers/bot-api-server.js';
import { FakeCardService } from '../test/helpers/fake-card-service.js';
import { type Figures, latencyFigures } from './latency.js';

// Remote push latency (pushes without events): a fake card service written from the spec
// (test/helpers/fake-card-service.ts) with 1,000 cards over 100 users, each user's chat linked through the bot
// (its token sent as a message) and its cards known to the bot; the bot in remote mode as `npm start` wires it
// (src/app/remote-mode.ts, a budget of 20 requests a second shared by every request and poll), on a SQLite file,
// sending to a local Bot API server (test/helpers/bot-api-server.ts).
// Measured: from an OTP added at the service to the bot's `sendMessage` of it reaching the Bot API server,
// p50/p95, for a watched card ("Waiting for a code" pressed in the chat: polled every second) and for
// unwatched ones (their turn in rounds over every card, which the budget paces); and the request rate the
// service saw.
// OTPs arrive for `BENCH_SECONDS` (20), one every ~500 ms on the watched card and one on a random unwatched
// card; then the unwatched ones still on their way are waited for, up to a round of every card.

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const USERS = 100;
const CARDS_PER_USER = 10;
const MAX_RPS = 20;
const POLL_SECONDS = 30;
const KEY = Buffer.alloc(32, 7);

const sec = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`.padStart(8);
const line = (f: Figures | undefined) =>
  f ? `p50 ${sec(f.p50)}  p95 ${sec(f.p95)}  max ${sec(f.max)}  (${f.count} OTPs)` : 'no OTP arrived';

export default async function (): Promise<void> {
  console.log(
    `remote push: an OTP added at a fake card service → the bot's sendMessage of it; ${USERS * CARDS_PER_USER} known cards over ${USERS} linked chats, budget ${MAX_RPS} requests/s, unwatched cards every ${POLL_SECONDS} s at most`,
  );
  const dir = mkdtempSync(path.join(os.tmpdir(), 'remote-push-bench-'));
  const fake = await new FakeCardService().listen();
  const telegram = new BotApiServer();
  const apiRoot = await telegram.start();
  const runtime = await startCore({ databaseUrl: path.join(dir, 'bench.db'), cardDataKey: KEY });
  const logger = createLogger('warn');
  const config = loadConfig({
    CARD_SERVICE_URL: fake.url,
    CARD_SERVICE_MAX_RPS: String(MAX_RPS),
    CARD_SERVICE_POLL_SECONDS: String(POLL_SECONDS),
  });
  const remote = startRemoteMode(config, runtime, logger);
  const bot = await startBot({
    cards: remote.cards,
    cipher: runtime.cipher,
    db: runtime.database.db,
    clock: systemClock,
    logger,
    config: { token: '123456:BENCH-remote', apiRoot, sensitiveTtlSeconds: 60, otpTtlSeconds: 300, pollIntervalMs: 50, rateLimit: false },
  });
  try {
    const db = runtime.database.db;
    const setup = createRemoteCardClient({ baseUrl: fake.url, timeoutMs: 10_000 });
    const known = createKnownCards(db);
    const users: { chatId: number; cards: string[] }[] = [];
    for (let u = 0; u < USERS; u++) {
      const token = fake.addUser('current', 10_000_000);
      const me = setup.as(token);
      const bin = (await me.listBins())[0]!;
      const cards: string[] = [];
      for (let c = 0; c < CARDS_PER_USER; c++) cards.push((await me.createCard({ binId: bin.id, name: `Card ${c}`, planId: 1 })).id);
      const chat = telegram.user(50_000 + u);
      const step = chat.send(token);
      await telegram.nextMessage(chat.chatId, step.mark, 'Linked');
      users.push({ chatId: chat.chatId, cards });
    }
    // The cards are known to the bot as cards it created (nothing to take as history); a thousand `/addcard`s
    // through the chats would only take the budget's time.
    const links = await db
      .withTables<{ bot_chat_links: { chat_id: number; user_id: string } }>()
      .selectFrom('bot_chat_links')
      .select(['chat_id', 'user_id'])
      .execute();
    const userOf = new Map(links.map((l) => [Number(l.chat_id), l.user_id]));
    for (const user of users)
      for (const card of user.cards) await known.remember(userOf.get(user.chatId)!, card, new Date(), { fresh: true });

    // "Waiting for a code", pressed in the first chat on its first card.
    const watchedChat = telegram.user(users[0]!.chatId);
    const watchedCard = users[0]!.cards[0]!;
    const shown = watchedChat.send(`/addcard ${watchedCard}`);
    const view = await telegram.nextMessage(watchedChat.chatId, shown.mark, 'Balance');
    const press = watchedChat.press(view, 'Waiting for a code');
    await telegram.waitForCall((c) => c.method === 'answerCallbackQuery' && c.payload.callback_query_id === press.queryId, press.mark);

    // Every user's transactions are read first (their first read takes them as history).
    const tables = remoteTables(db);
    while (
      Number(
        (
          await tables
            .selectFrom('bot_remote_users')
            .select((eb) => eb.fn.countAll().as('n'))
            .where('baselined_at', 'is not', null)
            .executeTakeFirstOrThrow()
        ).n,
      ) < USERS
    )
      await sleep(100);

    // OTP code → when it was added; the Bot API server's calls are read every 5 ms for the pushes since.
    const added = new Map<string, { at: number; watched: boolean }>();
    const latencies = { watched: [] as number[], unwatched: [] as number[] };
    let read = telegram.mark();
    let reading = true;
    const reader = (async () => {
      while (reading) {
        for (; read < telegram.calls.length; read++) {
          const call = telegram.calls[read]!;
          if (call.method !== 'sendMessage' || !call.ok) continue;
          const text = String(call.payload.text);
          for (const [code, origin] of added) {
            if (!text.includes(code)) continue;
            added.delete(code);
            (origin.watched ? latencies.watched : latencies.unwatched).push(call.at - origin.at);
          }
        }
        await sleep(5);
      }
    })();

    const requestsFrom = fake.requests.length;
    const startedAt = Date.now();
    const unwatched = users.flatMap((u) => u.cards).filter((c) => c !== watchedCard);
    const deadline = startedAt + SECONDS * 1000;
    let unwatchedSent = 0;
    // Each code is new, so a push is matched to its OTP by its code.
    let nextCode = 100_000;
    const addOtp = (cardId: string, watched: boolean) => {
      const code = String(nextCode++);
      fake.addOtp(cardId, code);
      added.set(code, { at: Date.now(), watched });
    };
    while (Date.now() < deadline) {
      await sleep(250 + Math.random() * 500);
      addOtp(watchedCard, true);
      addOtp(unwatched[Math.floor(Math.random() * unwatched.length)]!, false);
      unwatchedSent++;
    }
    const injectedFor = (Date.now() - startedAt) / 1000;
    // The unwatched ones on their way: at most a round of every card, which the budget paces.
    const round = ((USERS * (CARDS_PER_USER + 1)) / (MAX_RPS - 1)) * 1000;
    const drainUntil = Date.now() + Math.max(POLL_SECONDS * 1000, round) + 5_000;
    while (added.size > 0 && Date.now() < drainUntil) await sleep(100);
    const elapsed = (Date.now() - startedAt) / 1000;
    const requests = fake.requests.slice(requestsFrom);
    reading = false;
    await reader;

    const watchedPolls = requests.filter((r) => r.path.includes(`${watchedCard}/otps`)).length;
    console.log(`  ${'watched card'.padEnd(16)} ${line(latencyFigures(latencies.watched))}`);
    console.log(
      `  ${'unwatched cards'.padEnd(16)} ${line(latencyFigures(latencies.unwatched))}${added.size > 0 ? `  (${added.size} of ${unwatchedSent} not arrived)` : ''}`,
    );
    console.log(
      `  requests the service saw: ${(requests.length / elapsed).toFixed(1)}/s over ${elapsed.toFixed(0)} s (budget ${MAX_RPS}/s); the watched card's OTP list ${(watchedPolls / elapsed).toFixed(2)}/s; OTPs added for ${injectedFor.toFixed(0)} s`,
    );
    const p95 = latencyFigures(latencies.watched)?.p95;
    console.log(`  watched p95 within ~1 s of a poll every second: ${p95 !== undefined && p95 < 1_500 ? 'ok' : 'NOT MET'}`);
  } finally {
    await bot.stop();
    await remote.stop();
    await runtime.close();
    await fake.close();
    await telegram.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
