import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { botTables } from '../../src/bot/store/tables.js';
import { recordDelivery } from '../../src/bot/store/deliveries.js';
import { CLAIM_LEASE_MS } from '../../src/db/claims.js';
import { dialects, withoutPostgres } from '../core/dialects.js';
import { BotApiServer } from '../helpers/bot-api-server.js';
import { newCard, newCustomer } from '../helpers/core.js';
import { runAdminCli } from '../helpers/processes.js';
import { textUpdate } from '../helpers/updates.js';
import { openCore, sharedDatabase, sleep, startInstance, type Instance } from './instances.js';

// Several bot processes on one database (issue 10, section 2): each event reaches each chat once,
// whichever instance pushes it, and a push leaves as soon as the event is committed.

async function withServer(ctx: { after(fn: () => Promise<void>): void }): Promise<{ server: BotApiServer; apiRoot: string }> {
  const server = new BotApiServer();
  const apiRoot = await server.start();
  ctx.after(() => server.stop());
  return { server, apiRoot };
}

/** A customer of `instance` with a card, its chats linked. */
async function cardholder(instance: Instance, chats: number[]) {
  const me = await newCustomer(instance.t, 100_000);
  for (const chatId of chats) await instance.bot.handleUpdate(textUpdate({ id: chatId }, `/link ${me.token}`));
  const card = await newCard(instance.t, me);
  return { me, card };
}

/** The pushes to a chat since `mark` whose text holds `text` (an OTP's code, or its shop). */
const pushes = (server: BotApiServer, mark: number, chatId: number, text: string) =>
  server.calls
    .slice(mark)
    .filter((c) => c.method === 'sendMessage' && Number(c.payload.chat_id) === chatId && String(c.payload.text).includes(text));

/**
 * Starts the jobs of an instance that polls once a minute, and waits for its first poll to be over
 * (and for notifications from elsewhere to be listened for): from then on only a wake can push
 * within the test's time.
 */
async function startPollingRarely(instance: Instance): Promise<void> {
  await instance.start().listening;
  await sleep(200);
}

/** Waits until no event is left undelivered, then a little longer, for a duplicate to show if there were to be one. */
async function outboxDrained(instance: Instance): Promise<void> {
  while ((await instance.t.core.events.pending()).length > 0) await sleep(10);
  await sleep(150);
}

for (const dialect of dialects()) {
  describe(`pushes with several bot instances on one database (${dialect})`, () => {
    test('two instances push each event to each linked chat exactly once', async (ctx) => {
      const { server, apiRoot } = await withServer(ctx);
      const db = await sharedDatabase(ctx, dialect);
      const a = await startInstance(ctx, db, apiRoot);
      const b = await startInstance(ctx, db, apiRoot);
      const chats = [9701, 9702];
      const { card } = await cardholder(a, chats);
      const mark = server.mark();
      // A backlog both instances find at once, then events made on either side while both run.
      // Each event names a shop of its own: two of forty random six-digit codes may well be the same.
      const shops: string[] = [];
      const simulate = async (side: Instance, i: number) => {
        const shop = `Shop ${String(i).padStart(2, '0')}`;
        await side.t.admin.simulateOtp(card.id, 100, shop);
        shops.push(shop);
      };
      for (let i = 0; i < 20; i++) await simulate(a, i);
      a.start();
      b.start();
      for (let i = 20; i < 40; i++) await simulate(i % 2 ? a : b, i);
      await outboxDrained(a);

      // Several OTPs of a chat pending past its pace go as one message (the newest shown, the others counted).
      for (const chatId of chats) {
        const texts = server.calls
          .slice(mark)
          .filter((c) => c.method === 'sendMessage' && c.payload.chat_id === chatId)
          .map((c) => String(c.payload.text));
        const twice = shops.filter((shop) => texts.filter((text) => text.includes(shop)).length > 1);
        assert.deepEqual(twice, [], `each event shown at most once in ${chatId}`);
        const shown = shops.filter((shop) => texts.some((text) => text.includes(shop))).length;
        const merged = texts.reduce((sum, text) => sum + Number(/(\d+) earlier codes? not shown/.exec(text)?.[1] ?? 0), 0);
        assert.equal(shown + merged, shops.length, `every event reached ${chatId}, and nothing else was sent:\n${texts.join('\n')}`);
        assert.ok(texts.every((text) => /Shop \d\d/.test(text)));
        assert.ok(texts.length < shops.length, 'merged into fewer messages than events');
      }
    });

    test('events held by a process that died are pushed once its claim lapses, only to the chats it had not reached', async (ctx) => {
      const { server, apiRoot } = await withServer(ctx);
      const db = await sharedDatabase(ctx, dialect);
      const live = await startInstance(ctx, db, apiRoot);
      const { card } = await cardholder(live, [9711, 9712]);
      const mark = server.mark();
      const otp = await live.t.admin.simulateOtp(card.id, 100, 'Shop');
      // Another process claimed the event, pushed it to the first chat, and died before the second.
      const dead = await live.t.core.events.claim({ id: 'a-process-that-died', clock: live.t.clock });
      assert.equal(dead.items.length, 1);
      await recordDelivery(botTables(live.t.database.db), dead.items[0]!.seq, 9711, live.t.clock.now());

      live.start();
      await sleep(200);
      assert.equal(server.calls.slice(mark).length, 0, 'nothing pushed while the claim holds');
      live.t.clock.advance(CLAIM_LEASE_MS);
      await server.nextMessage(9712, mark, otp.code);
      await outboxDrained(live);
      assert.equal(pushes(server, mark, 9712, otp.code).length, 1);
      assert.equal(pushes(server, mark, 9711, otp.code).length, 0, 'recorded as sent by the dead process');
    });

    test('an event committed in this process is pushed at once, without waiting for the next poll', async (ctx) => {
      const { server, apiRoot } = await withServer(ctx);
      const db = await sharedDatabase(ctx, dialect);
      // Polls once a minute: only the wake can push within the test's time.
      const instance = await startInstance(ctx, db, apiRoot, { pollIntervalMs: 60_000 });
      const { card } = await cardholder(instance, [9721]);
      await startPollingRarely(instance);
      const mark = server.mark();
      const otp = await instance.t.admin.simulateOtp(card.id, 100, 'Shop');
      await server.nextMessage(9721, mark, otp.code);
    });
  });
}

describe('pushes woken by Postgres notifications', { skip: withoutPostgres }, () => {
  test('an event committed over another connection (another core, as in another process) wakes the push', async (ctx) => {
    const { server, apiRoot } = await withServer(ctx);
    const db = await sharedDatabase(ctx, 'postgres');
    const bot = await startInstance(ctx, db, apiRoot, { pollIntervalMs: 60_000 });
    const { card } = await cardholder(bot, [9731]);
    await startPollingRarely(bot);
    const elsewhere = await openCore(ctx, db);
    const mark = server.mark();
    const otp = await elsewhere.admin.simulateOtp(card.id, 100, 'Shop');
    await server.nextMessage(9731, mark, otp.code);
    await elsewhere.admin.simulatePurchase(card.id, 250, 'Bakery');
    await server.nextMessage(9731, mark, 'Bakery');
  });

  test('the admin command line, a process of its own, wakes the push of the bot process', async (ctx) => {
    const { server, apiRoot } = await withServer(ctx);
    const db = await sharedDatabase(ctx, 'postgres');
    const bot = await startInstance(ctx, db, apiRoot, { pollIntervalMs: 60_000 });
    const { card } = await cardholder(bot, [9741]);
    await startPollingRarely(bot);
    const mark = server.mark();
    const env = { DATABASE_URL: db.url, CARD_DATA_KEY_FILE: db.keyFile };
    const otp = await db.guard(() => runAdminCli(db.dir, env, 'simulate', 'otp', '--card', card.id));
    assert.equal(otp.code, 0, otp.output);
    await server.nextMessage(9741, mark, String(otp.json.code));
  });

  test('notifications of another schema (another deployment on the same database) wake nobody here', async (ctx) => {
    const { server, apiRoot } = await withServer(ctx);
    const db = await sharedDatabase(ctx, 'postgres');
    const other = await sharedDatabase(ctx, 'postgres');
    const bot = await startInstance(ctx, db, apiRoot, { pollIntervalMs: 60_000 });
    await startPollingRarely(bot);
    let woken = 0;
    const subscription = bot.t.core.events.onCommitted(() => woken++);
    ctx.after(() => subscription.close());
    await subscription.ready;
    const elsewhere = await openCore(ctx, other);
    const me = await newCustomer(elsewhere, 10_000);
    const card = await newCard(elsewhere, me);
    woken = 0;
    const mark = server.mark();
    await elsewhere.admin.simulateOtp(card.id);
    await sleep(300);
    assert.equal(woken, 0);
    assert.equal(server.calls.slice(mark).length, 0);
  });
});
