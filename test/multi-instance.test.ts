import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Update } from 'grammy/types';
import { Redis } from 'ioredis';
import { chatKeyOf } from '../src/bot/runtime/inbox.js';
import { hashToken } from '../src/core/keys/secrets.js';
import { freshPostgresSchema, whileNoSchemaIsDropped } from './core/dialects.js';
import { BotApiServer, type RecordedCall, type ScriptedUser } from './helpers/bot-api-server.js';
import { ENTRY, freePort, runAdminCli, type StartedProcess, startProcess } from './helpers/processes.js';
import { eventually } from './helpers/wait.js';
import { redisUnavailable, TEST_REDIS_COMMAND_TIMEOUT_MS, TEST_REDIS_URL, testRedis } from './helpers/redis.js';

// Issue 10, section 2, as an operator deploys it: two bot processes in webhook mode and two API processes
// on one Postgres, sharing Redis. The test plays Telegram (the Bot API test server for the bot's calls, and
// the webhook posts, spread over both bot processes like a load balancer would), the cardholders, and the
// admin on call (the admin CLI in processes of its own). One bot process is killed in the middle.

const BASE_URL = process.env.TEST_DATABASE_URL;
const REDIS_URL = TEST_REDIS_URL;
const SECRET = 'multi-instance-secret-0123456789abcdef';
const BOT_TOKEN = '123456:MULTI-instance';
const HOOK_PATH = '/telegram/hook';
/** Telegram ids far from other tests'. */
const ID_BASE = 7_000_000 + Math.floor(Math.random() * 1_000_000) * 10;
/** How long the test waits for what the processes do, and how often it looks. */
const PATIENCE = { timeoutMs: 30_000, everyMs: 50 };
/** This run's Redis keys, apart from other runs' (the per-address counts of 127.0.0.1 would add up across runs). */
const redisKeys = testRedis();
const REDIS_KEY_PREFIX = redisKeys.prefix;

interface Instance {
  name: string;
  process: StartedProcess;
  url: string;
  alive: boolean;
}

const skip = BASE_URL === undefined ? 'needs TEST_DATABASE_URL (Postgres)' : redisUnavailable || undefined;

describe('two bot instances (webhook) and two API processes on one Postgres', { skip, timeout: 240_000 }, () => {
  let server: BotApiServer;
  let dir: string;
  let schema: { url: string; drop(): Promise<void> };
  let env: Record<string, string>;
  const bots: Instance[] = [];
  const apis: Instance[] = [];
  let pumping = true;
  let pump: Promise<void> | undefined;
  let delivered = 0;

  /** Posts one update to a live bot process, as Telegram does; a process that died is skipped, as a load balancer would. */
  async function deliver(update: Record<string, unknown>, prefer: number): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const live = bots.filter((b) => b.alive);
      const target = live[(prefer + attempt) % live.length]!;
      try {
        const response = await fetch(`${target.url}${HOOK_PATH}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET },
          body: JSON.stringify(update),
        });
        if (response.ok) {
          delivered++;
          return;
        }
      } catch {
        // A killed process: Telegram retries, the balancer sends it to the other one.
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`update ${String(update.update_id)} could not be delivered`);
  }

  before(async () => {
    schema = await freshPostgresSchema(BASE_URL!);
    server = new BotApiServer();
    const apiRoot = await server.start();
    dir = mkdtempSync(path.join(tmpdir(), 'multi-instance-'));
    env = {
      BOT_TOKEN,
      TELEGRAM_API_ROOT: apiRoot,
      DATABASE_URL: schema.url,
      CARD_DATA_KEY_FILE: path.join(dir, 'card-data.key'),
      REDIS_URL,
      REDIS_KEY_PREFIX,
      REDIS_COMMAND_TIMEOUT_MS: String(TEST_REDIS_COMMAND_TIMEOUT_MS),
      OTP_TTL_SECONDS: '2',
      LOG_LEVEL: 'warn',
    };
    // The first start migrates and makes the key; the others start on the same database together. Every
    // start (and every admin command) migrates, reading every schema's tables: no other test's schema may be
    // dropped meanwhile (see `whileNoSchemaIsDropped`).
    await whileNoSchemaIsDropped(BASE_URL!, async () => {
      for (const [i, name] of ['bot-a', 'bot-b'].entries()) {
        const port = await freePort();
        const url = `http://127.0.0.1:${port}`;
        const started = startProcess(dir, {
          ...env,
          LOG_LEVEL: 'info',
          BOT_MODE: 'webhook',
          WEBHOOK_URL: `${url}${HOOK_PATH}`,
          WEBHOOK_SECRET: SECRET,
          HTTP_PORT: String(port),
        });
        bots.push({ name, process: started, url, alive: true });
        if (i === 0) await started.waitForLog('bot serving its webhook');
      }
      await bots[1]!.process.waitForLog('bot serving its webhook');
      for (const name of ['api-a', 'api-b']) {
        const port = await freePort();
        const started = startProcess(
          dir,
          { ...env, LOG_LEVEL: 'info', HTTP_PORT: String(port), API_RATE_LIMIT_PER_TOKEN: '40' },
          ENTRY.api,
        );
        apis.push({ name, process: started, url: `http://127.0.0.1:${port}`, alive: true });
      }
      for (const api of apis) await api.process.waitForLog('HTTP API listening');
    });

    // Telegram's side: every update the scripted users make is posted to the bot processes in turn, several
    // at once (Telegram keeps up to 40 connections open to a webhook). A chat's update is posted once the
    // one before it was answered: posted together, the later one could be stored first, and handled first.
    pump = (async () => {
      let turn = 0;
      const inFlight = new Set<Promise<void>>();
      const lastOfChat = new Map<string | undefined, Promise<void>>();
      while (pumping || server.pendingUpdates() > 0) {
        const updates = server.takeUpdates();
        for (const update of updates) {
          const chat = chatKeyOf(update as unknown as Update);
          const prefer = turn++;
          const sent = (lastOfChat.get(chat) ?? Promise.resolve()).then(() => deliver(update, prefer)).finally(() => inFlight.delete(sent));
          lastOfChat.set(chat, sent);
          inFlight.add(sent);
          if (inFlight.size >= 8) await Promise.race(inFlight);
        }
        if (updates.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await Promise.all(inFlight);
    })();
  });

  after(async () => {
    pumping = false;
    await pump?.catch(() => undefined);
    for (const instance of [...bots, ...apis]) {
      if (instance.alive) instance.process.child.kill('SIGTERM');
      await instance.process.exited;
    }
    await server?.stop();
    await schema?.drop();
    await redisKeys.cleanUp();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const admin = (...args: string[]) => whileNoSchemaIsDropped(BASE_URL!, () => runAdminCli(dir, env, ...args));
  const sentTo = (chatId: number, from = 0) =>
    server.calls.slice(from).filter((c) => c.ok && c.method === 'sendMessage' && Number(c.payload.chat_id) === chatId);
  const api = (i: number, method: string, url: string, token: string, body?: unknown) =>
    fetch(`${apis[i % apis.length]!.url}${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  interface Holder {
    user: ScriptedUser;
    userId: string;
    token: string;
    cardId: string;
  }
  const holders: Holder[] = [];

  it('links chats and makes cards through both API processes', async () => {
    for (let i = 0; i < 4; i++) {
      const created = await admin('users', 'create', '--name', `Holder ${i}`, '--deposit', '500');
      assert.equal(created.code, 0, created.output);
      const user = server.user(ID_BASE + i);
      const linked = user.send(created.json.token as string);
      await server.nextMessage(user.chatId, linked.mark, 'Linked');
      holders.push({ user, userId: created.json.userId as string, token: created.json.token as string, cardId: '' });
    }
    const bins = (await (await api(1, 'GET', '/api/v1/bins', holders[0]!.token)).json()) as { data: { id: string; wallet: boolean }[] };
    const plans = (await (await api(0, 'GET', '/api/v1/card-plans', holders[0]!.token)).json()) as { data: { id: number }[] };
    const bin = bins.data.find((b) => !b.wallet)!;
    for (const [i, holder] of holders.entries()) {
      const response = await api(i, 'POST', '/api/v1/cards', holder.token, {
        bin_id: bin.id,
        planId: plans.data.at(-1)!.id,
        name: `Card ${i}`,
      });
      const text = await response.text();
      assert.equal(response.status, 201, text);
      holder.cardId = (JSON.parse(text) as { data: { id: string } }).data.id;
    }
  });

  it("handles each chat's updates once, in order, across both processes; pushes each event to each chat once; deletes each OTP once", async () => {
    const mark = server.mark();
    // Six commands per chat, all chats at once, spread over both processes by the pump.
    const sequence = ['/help', '/cards', '/help', '/cards', '/help', '/cards'];
    for (const command of sequence) for (const holder of holders) holder.user.send(command);
    // Meanwhile the admin on call makes an OTP and a purchase on every card.
    const otps: string[] = [];
    for (const holder of holders) {
      const otp = await admin('simulate', 'otp', '--card', holder.cardId, '--amount', '3', '--merchant', 'Shop');
      assert.equal(otp.code, 0, otp.output);
      otps.push(String(otp.json.code));
      const purchase = await admin('simulate', 'purchase', '--card', holder.cardId, '--amount', '1', '--merchant', 'Cafe');
      assert.equal(purchase.code, 0, purchase.output);
    }

    for (const [i, holder] of holders.entries()) {
      const chat = holder.user.chatId;
      const replies = () => sentTo(chat, mark).filter((c) => /\/menu — main menu|Your cards|no cards/.test(String(c.payload.text)));
      await eventually(`six replies in chat ${chat}`, () => replies().length >= sequence.length, PATIENCE);
      const kinds = replies().map((c) => (String(c.payload.text).includes('/menu — main menu') ? '/help' : '/cards'));
      assert.deepEqual(kinds, sequence, `chat ${chat}: replies in the order of the updates`);

      const otpPushes = () => sentTo(chat, mark).filter((c) => String(c.payload.text).includes(otps[i]!));
      const purchasePushes = () => sentTo(chat, mark).filter((c) => String(c.payload.text).includes('Cafe'));
      await eventually(`the pushes in chat ${chat}`, () => otpPushes().length >= 1 && purchasePushes().length >= 1, PATIENCE);
      // The OTP message deletes itself after 2 s: once, by one of the two processes.
      const otpMessage = (otpPushes()[0]!.result as { message_id: number }).message_id;
      const deletions = () =>
        server.calls.filter(
          (c) => c.method === 'deleteMessage' && Number(c.payload.chat_id) === chat && Number(c.payload.message_id) === otpMessage,
        );
      await eventually(`the OTP message deleted in chat ${chat}`, () => deletions().length >= 1, PATIENCE);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(otpPushes().length, 1, `chat ${chat}: the OTP pushed once`);
      assert.equal(purchasePushes().length, 1, `chat ${chat}: the purchase pushed once`);
      assert.equal(deletions().length, 1, `chat ${chat}: the OTP deleted once`);
    }
    // Both processes did part of the work.
    const handledBy = bots.map((b) => b.process.logs.length);
    assert.ok(delivered >= holders.length * sequence.length, String(handledBy));
  });

  it("the bot's and the API's per-user limits hold across the processes (one count in Redis)", async () => {
    // The bot: 10 messages per 3 s per user; 30 spread over both processes is over it even on a machine so
    // busy that the chat's updates, posted one after another, take 3 s to pass 11 (15 each would not be).
    const flooder = server.user(ID_BASE + 9);
    const mark = server.mark();
    for (let i = 0; i < 30; i++) flooder.send(`hello ${i}`);
    await eventually(
      'the flood answered',
      () => sentTo(flooder.chatId, mark).some((c) => String(c.payload.text).includes('slow down')),
      PATIENCE,
    );

    // The API: 40 requests a minute per token; 50 spread over both processes.
    const created = await admin('users', 'create', '--name', 'Busy', '--deposit', '1');
    const statuses: number[] = [];
    for (let i = 0; i < 50; i++) statuses.push((await api(i, 'GET', '/api/v1/wallet/balance', created.json.token as string)).status);
    assert.equal(statuses.filter((s) => s === 200).length, 40, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 429).length, 10);
    // Counted under this deployment's REDIS_KEY_PREFIX, and only there.
    const redis = new Redis(REDIS_URL);
    try {
      const key = `api:token:${hashToken(created.json.token as string)}`;
      assert.equal(await redis.exists(`${REDIS_KEY_PREFIX}${key}`), 1);
      assert.equal(await redis.exists(`virtual-cards:${key}`), 0);
    } finally {
      redis.disconnect();
    }
  });

  it('a bot process killed mid-stream: every update and push still arrives (at least once), in order per chat', async () => {
    const mark = server.mark();
    const sequence = ['/cards', '/help', '/cards', '/help'];
    const otps: string[] = [];
    for (const command of sequence.slice(0, 2)) for (const holder of holders) holder.user.send(command);
    for (const holder of holders.slice(0, 2)) {
      const otp = await admin('simulate', 'otp', '--card', holder.cardId, '--amount', '4', '--merchant', 'Kiosk');
      otps.push(String(otp.json.code));
    }
    // Killed with work in hand: its chat leases and claims lapse, the other process takes them over.
    const victim = bots[0]!;
    victim.alive = false;
    victim.process.child.kill('SIGKILL');
    await victim.process.exited;
    for (const command of sequence.slice(2)) for (const holder of holders) holder.user.send(command);
    for (const holder of holders.slice(2)) {
      const otp = await admin('simulate', 'otp', '--card', holder.cardId, '--amount', '4', '--merchant', 'Kiosk');
      otps.push(String(otp.json.code));
    }

    for (const [i, holder] of holders.entries()) {
      const chat = holder.user.chatId;
      const replies = () => sentTo(chat, mark).filter((c) => /\/menu — main menu|Your cards|no cards/.test(String(c.payload.text)));
      const kinds = () => replies().map((c) => (String(c.payload.text).includes('/menu — main menu') ? '/help' : '/cards'));
      // At least once: an update in the dead process's hands is handled again, right after itself.
      const deduplicated = () => kinds().filter((kind, k, all) => k === 0 || kind !== all[k - 1]);
      await eventually(`chat ${chat}: every update handled after the kill`, () => deduplicated().length >= sequence.length, {
        ...PATIENCE,
        timeoutMs: 60_000,
        seen: () => JSON.stringify(kinds()),
      });
      assert.deepEqual(deduplicated(), sequence, `chat ${chat}: in order`);
      await eventually(
        `chat ${chat}: the OTP pushed after the kill`,
        () => sentTo(chat, mark).some((c) => String(c.payload.text).includes(otps[i]!)),
        { ...PATIENCE, timeoutMs: 60_000 },
      );
    }
  });

  it('a token revoked on the command line stops the surviving bot process and both API processes at once', async () => {
    const holder = holders[3]!;
    const revoked = await admin('tokens', 'revoke', '--token', holder.token);
    assert.equal(revoked.code, 0, revoked.output);
    for (let i = 0; i < 2; i++) assert.equal((await api(i, 'GET', '/api/v1/wallet/balance', holder.token)).status, 401);
    const mark = server.mark();
    holder.user.send('/cards');
    await server.nextMessage(holder.user.chatId, mark, /not linked/);
    const otp = await admin('simulate', 'otp', '--card', holder.cardId);
    // Another chat's push goes out after it; the revoked chat gets none.
    const other = await admin('simulate', 'otp', '--card', holders[2]!.cardId);
    await server.nextMessage(holders[2]!.user.chatId, mark, String(other.json.code));
    const calls: RecordedCall[] = sentTo(holder.user.chatId, mark);
    assert.ok(!calls.some((c) => String(c.payload.text).includes(String(otp.json.code))), 'no OTP for a revoked chat');
  });
});
