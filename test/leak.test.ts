import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { startHttpApi, type RunningHttpApi } from '../src/api/start.js';
import type { RunningBot } from '../src/bot/runtime/running-bot.js';
import { startBot } from '../src/bot/runtime/start-polling.js';
import { startCoreFromConfig, type CoreRuntime } from '../src/app/compose.js';
import { loadConfig } from '../src/app/config.js';
import type { CardService } from '../src/core/service.js';
import { createLogger } from '../src/infra/logger.js';
import { BotApiServer, type StoredMessage } from './helpers/bot-api-server.js';

// The leak test of the trust review: a full scripted run of the API and the bot at LOG_LEVEL=trace, with
// errors, a forced 500 and a restart; then the logs, the database file and its WAL are scanned for every
// card number, CVV and API token that went through. None may be found.

describe('no card number, CVV or API token reaches a log or the database in clear', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'leak-'));
  let log = '';
  const sink = new Writable({
    write(chunk, _encoding, done) {
      log += String(chunk);
      done();
    },
  });
  const logger = createLogger('trace', sink);
  const server = new BotApiServer();
  const pans = new Set<string>();
  const cvvs = new Set<string>();
  const tokens = new Set<string>();
  const walWhileRunning: Buffer[] = [];

  /** What is running now: stopped by `after` when a failed step left it running. */
  let current: Running | undefined;
  after(async () => {
    if (current) await stop(current);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  interface Running {
    runtime: CoreRuntime;
    api: RunningHttpApi;
    bot: RunningBot;
    fail: { next: boolean };
  }

  async function start(apiRoot: string): Promise<Running> {
    const config = loadConfig({
      DATABASE_URL: path.join(dir, 'cards.db'),
      CARD_DATA_KEY_FILE: path.join(dir, 'card-data.key'),
      BOT_TOKEN: '123456:LEAK-test',
      TELEGRAM_API_ROOT: apiRoot,
      HTTP_PORT: '0',
      LOG_LEVEL: 'trace',
    });
    const runtime = await startCoreFromConfig(config, logger);
    // A core whose wallet read fails once on demand: the forced 500.
    const fail = { next: false };
    const core = Object.assign(Object.create(runtime.core) as CardService, {
      walletBalance: (...args: Parameters<CardService['walletBalance']>) => {
        if (fail.next) {
          fail.next = false;
          throw new TypeError("Cannot read properties of undefined (reading 'balance')");
        }
        return runtime.core.walletBalance(...args);
      },
    });
    const api = await startHttpApi({ runtime: { ...runtime, core }, config, logger });
    const bot = await startBot({
      core: runtime.core,
      cipher: runtime.cipher,
      db: runtime.database.db,
      clock: runtime.clock,
      logger: logger.child({ component: 'bot' }),
      config: { token: config.BOT_TOKEN!, apiRoot, sensitiveTtlSeconds: 1, otpTtlSeconds: 1, pollIntervalMs: 50, rateLimit: false },
    });
    current = { runtime, api, bot, fail };
    return current;
  }

  async function stop(running: Running): Promise<void> {
    current = undefined;
    await running.api.close();
    await running.bot.stop();
    await running.runtime.close();
  }

  function walNow(): void {
    const wal = path.join(dir, 'cards.db-wal');
    if (existsSync(wal)) walWhileRunning.push(readFileSync(wal));
  }

  async function call(
    running: Running,
    method: string,
    route: string,
    token: string | undefined,
    body?: unknown,
    headers: Record<string, string> = {},
  ) {
    const response = await fetch(`${running.api.url}${route}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  }

  async function detailsInChat(user: ReturnType<BotApiServer['user']>, cardView: StoredMessage): Promise<void> {
    const press = user.press(cardView, 'Details');
    const details = await server.nextMessage(user.chatId, press.mark, 'Card details');
    const pan = /\d{16}/.exec(details.text.replaceAll(' ', ''))?.[0];
    assert.ok(pan && pans.has(pan), 'the chat showed a card number the API showed too');
  }

  it('a scripted run of every operation, errors, a forced 500 and a restart leaves none behind', { timeout: 120_000 }, async () => {
    const apiRoot = await server.start();
    let running = await start(apiRoot);

    const { userId, token } = await running.runtime.admin.createUser({ name: 'Leak', deposit: 100_000 });
    const spare = await running.runtime.admin.issueToken(userId);
    const wrong = `vc_${'A'.repeat(43)}`;
    for (const t of [token, spare, wrong]) tokens.add(t);

    // The API: every endpoint, its refusals, an idempotent replay, a forced 500.
    const bins = (await call(running, 'GET', '/api/v1/bins', token)).body.data as { id: string; wallet: boolean }[];
    const plans = (await call(running, 'GET', '/api/v1/card-plans', token)).body.data as { id: number }[];
    const create = (name: string) =>
      call(
        running,
        'POST',
        '/api/v1/cards',
        token,
        { bin_id: bins[0]!.id, name, planId: plans[0]!.id },
        { 'idempotency-key': `create-${name}` },
      );
    const card = (await create('Main')).body.data.id as string;
    assert.equal((await create('Main')).status, 201, 'replayed');
    const other = (await create('Other')).body.data.id as string;
    for (const id of [card, other]) {
      const details = await call(running, 'GET', `/api/v1/cards/${id}/details`, token);
      pans.add(details.body.data.PAN);
      cvvs.add(details.body.data.CVV);
    }
    assert.equal(pans.size, 2);
    const expect = async (status: number, promise: ReturnType<typeof call>) => assert.equal((await promise).status, status);
    await expect(200, call(running, 'GET', '/api/v1/health', token));
    await expect(200, call(running, 'GET', `/api/v1/cards/${card}`, token));
    await expect(200, call(running, 'GET', '/api/v1/cards', token));
    await expect(200, call(running, 'POST', `/api/v1/cards/${card}/topup/quote`, token, { amount: 50 }));
    await expect(200, call(running, 'POST', `/api/v1/cards/${card}/topup`, token, { amount: 50 }, { 'idempotency-key': 'topup-1' }));
    await expect(429, call(running, 'POST', `/api/v1/cards/${card}/topup`, token, { amount: 50 }));
    await expect(200, call(running, 'POST', `/api/v1/cards/${card}/withdraw`, spare, { amount: 10 }));
    await expect(429, call(running, 'POST', `/api/v1/cards/${card}/withdraw`, token, { amount: 10 }));
    await expect(200, call(running, 'PATCH', `/api/v1/cards/${card}/freeze`, token));
    await expect(409, call(running, 'PATCH', `/api/v1/cards/${card}/freeze`, token));
    await expect(200, call(running, 'PATCH', `/api/v1/cards/${card}/unfreeze`, token));
    await expect(200, call(running, 'GET', `/api/v1/cards/transactions?card_id=${card}`, token));
    await running.runtime.admin.simulateOtpEmail(card);
    await expect(200, call(running, 'POST', `/api/v1/cards/${card}/otps/request`, token));
    await expect(404, call(running, 'POST', `/api/v1/cards/${card}/otps/request`, token));
    await expect(200, call(running, 'GET', `/api/v1/cards/${card}/otps`, token));
    await expect(200, call(running, 'PATCH', `/api/v1/cards/${other}/close`, token));
    await expect(200, call(running, 'GET', '/api/v1/wallet/balance', token));
    await expect(401, call(running, 'GET', '/api/v1/wallet/balance', wrong));
    await expect(401, call(running, 'GET', '/api/v1/wallet/balance', undefined));
    await expect(400, call(running, 'POST', `/api/v1/cards/${card}/topup`, token, { amount: 5.001 }));
    await expect(400, call(running, 'POST', `/api/v1/cards/${card}/topup`, token, `{"amount": ${pans.values().next().value}`));
    await expect(404, call(running, 'GET', `/api/v1/cards/00000000-0000-4000-8000-000000000000`, token));
    await expect(422, call(running, 'POST', '/api/v1/cards', token, { bin_id: 'nope', name: 'x', planId: plans[0]!.id }));
    running.fail.next = true;
    await expect(500, call(running, 'GET', '/api/v1/wallet/balance', token));
    walNow();

    // The bot: linking by /start with the token, a token in a group, details, an OTP push.
    const user = server.user(7301);
    let step = user.send(`/start ${token}`);
    const menu = await server.nextMessage(user.chatId, step.mark, 'Linked');
    step = user.inGroup(-7300).send(`here is my token ${spare}`);
    await server.waitForCall((c) => c.method === 'sendMessage' && Number(c.payload.chat_id) === -7300, step.mark);
    let press = user.press(menu, 'My cards');
    const list = await server.nextEdit(user.chatId, press.mark, 'Your cards');
    press = user.press(list, 'Main');
    const cardView = await server.nextEdit(user.chatId, press.mark, 'Balance');
    await detailsInChat(user, cardView);
    const mark = server.mark();
    const otp = await running.runtime.admin.simulateOtp(card, 1_000, 'Leak shop');
    await server.nextMessage(user.chatId, mark, otp.code);
    await running.runtime.admin.simulatePurchase(card, 500, 'Leak shop');
    // The purchase's own push (the OTP's message names the shop too), delivered before the restart.
    await server.nextMessage(user.chatId, mark, /Debit .* at Leak shop/);
    walNow();

    // A restart over the same files: the same key, the same cards.
    await stop(running);
    running = await start(apiRoot);
    const again = await call(running, 'GET', `/api/v1/cards/${card}/details`, token);
    assert.ok(pans.has(again.body.data.PAN));
    step = user.send('/cards');
    const cards = await server.nextMessage(user.chatId, step.mark);
    press = user.press(cards, 'Main');
    await detailsInChat(user, await server.nextEdit(user.chatId, press.mark, 'Balance'));
    walNow();
    await stop(running);

    // The scan.
    assert.equal(logger.level, 'trace');
    assert.match(log, /Unexpected error while handling a request/, 'the forced 500 was logged');
    const files = [path.join(dir, 'cards.db'), path.join(dir, 'cards.db-wal')].filter(existsSync).map((f) => readFileSync(f));
    const places: [string, string][] = [
      ['log', log],
      ...files.map((f, i): [string, string] => [`database file ${i}`, f.toString('latin1')]),
      ...walWhileRunning.map((w, i): [string, string] => [`WAL snapshot ${i}`, w.toString('latin1')]),
    ];
    assert.ok(walWhileRunning.length > 0, 'the WAL was read while the service ran');
    // The scan can see text in the files: the masked numbers are there in clear.
    const masked = [...pans].map((pan) => `**** **** **** ${pan.slice(-4)}`);
    assert.ok(
      masked.every((m) => files.some((f) => f.toString('latin1').includes(m))),
      'masked numbers are readable in the files',
    );
    const hits: string[] = [];
    for (const [where, text] of places) {
      for (const pan of pans) if (text.includes(pan) || text.includes(pan.replace(/(\d{4})(?=\d)/g, '$1 '))) hits.push(`PAN in ${where}`);
      // A bare 3-digit number turns up by chance in any file: a CVV is looked for as it would be written.
      for (const cvv of cvvs) if (new RegExp(`cvv\\W{0,4}${cvv}\\b`, 'i').test(text)) hits.push(`CVV in ${where}`);
      for (const t of tokens) if (text.includes(t) || text.includes(t.slice(3))) hits.push(`token ${t.slice(0, 7)}… in ${where}`);
    }
    assert.deepEqual(hits, []);
  });
});
