import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startCore } from '../src/app/compose.js';
import { BotApiServer } from './helpers/bot-api-server.js';
import { ENTRY, freePort, runAdminCli, startProcess as startMain } from './helpers/processes.js';

// `npm start` as an operator runs it: src/main.ts in its own process, settings from the environment.

const API_MAIN = ENTRY.api;
const BOT_TOKEN = '123456:MAIN-test';

/** A user created beside the running process, in the same SQLite file, with the key it generated. */
async function createUser(dir: string): Promise<string> {
  const key = Buffer.from(readFileSync(path.join(dir, 'card-data.key'), 'utf8').trim(), 'base64');
  const runtime = await startCore({ databaseUrl: path.join(dir, 'cards.db'), cardDataKey: key });
  try {
    return (await runtime.admin.createUser({ name: 'Main', deposit: 10_000 })).token;
  } finally {
    await runtime.close();
  }
}

describe('npm start (src/main.ts)', () => {
  let server: BotApiServer;
  let apiRoot: string;
  const dirs: string[] = [];
  const folder = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'main-'));
    dirs.push(dir);
    return dir;
  };
  const baseEnv = (dir: string) => ({
    BOT_TOKEN,
    TELEGRAM_API_ROOT: apiRoot,
    DATABASE_URL: path.join(dir, 'cards.db'),
    CARD_DATA_KEY_FILE: path.join(dir, 'card-data.key'),
  });

  before(async () => {
    server = new BotApiServer();
    apiRoot = await server.start();
  });
  after(async () => {
    await server.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('polls for the bot and serves the HTTP API from one process, then stops cleanly on SIGTERM', async () => {
    const dir = folder();
    const main = startMain(dir, { ...baseEnv(dir), HTTP_PORT: '0' });
    try {
      const listening = await main.waitForLog('HTTP API listening');
      await main.waitForLog('bot polling');
      const keyFile = path.join(dir, 'card-data.key');
      assert.equal(statSync(keyFile).mode & 0o777, 0o600);
      assert.ok(!main.output().includes(readFileSync(keyFile, 'utf8').trim()), 'the key never reaches the log');

      const token = await createUser(dir);
      const health = await fetch(`${listening.url}/api/v1/health`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(health.status, 200);
      // Ready: the database answers, nothing pending, and the bot of this process reached Telegram.
      const ready = await fetch(`${listening.url}/readyz`);
      assert.equal(ready.status, 200);
      assert.deepEqual(((await ready.json()) as { data: unknown }).data, {
        status: 'ready',
        checks: { database: 'ok', migrations: 'ok', bot: 'ok' },
      });
      // Access lines name the route, never the token.
      const access = await main.waitForLog((l) => l.msg === 'request' && l.route === '/api/v1/health');
      assert.equal(access.status, 200);

      const user = server.user(5001);
      const step = user.send(token);
      await server.nextMessage(user.chatId, step.mark, 'Linked');
      assert.ok(server.calls.some((c) => c.method === 'setMyCommands'));
      assert.ok(!main.output().includes(token), 'the token never reaches the log');
    } finally {
      main.child.kill('SIGTERM');
    }
    assert.equal(await main.exited, 0);
    await main.waitForLog('Stopped');
  });

  /** `src/main.ts` in webhook mode on a port of its own, serving `url` with the secret `hook_secret_…`. */
  async function startWebhookMain(extra: Record<string, string> = {}) {
    const dir = folder();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/telegram/hook`;
    const main = startMain(dir, {
      ...baseEnv(dir),
      HTTP_PORT: String(port),
      BOT_MODE: 'webhook',
      WEBHOOK_URL: url,
      WEBHOOK_SECRET: 'hook_secret_0123456789abcdef0123456789',
      ...extra,
    });
    return { main, url, port };
  }

  it('in webhook mode serves the webhook on the HTTP server, checks the secret token and registers the URL', async () => {
    const mark = server.mark();
    const { main, url, port } = await startWebhookMain();
    try {
      await main.waitForLog('bot serving its webhook');
      const registered = await server.waitForCall((c) => c.method === 'setWebhook', mark);
      assert.equal(registered.payload.url, url);
      assert.equal(registered.payload.secret_token, 'hook_secret_0123456789abcdef0123456789');

      const update = {
        update_id: 1,
        message: {
          message_id: 1,
          date: 0,
          chat: { id: 6001, type: 'private', first_name: 'W' },
          from: { id: 6001, is_bot: false, first_name: 'W' },
          text: '/start',
          entities: [{ type: 'bot_command', offset: 0, length: 6 }],
        },
      };
      const post = (secret?: string) =>
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(secret ? { 'x-telegram-bot-api-secret-token': secret } : {}) },
          body: JSON.stringify(update),
        });
      assert.equal((await post()).status, 401);
      assert.equal((await post('wrong')).status, 401);
      const before = server.mark();
      assert.equal((await post('hook_secret_0123456789abcdef0123456789')).status, 200);
      await server.nextMessage(6001, before, 'API token');
      assert.ok(!server.calls.slice(mark).some((c) => c.method === 'getUpdates'));

      const api = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
      assert.equal(api.status, 401);
    } finally {
      main.child.kill('SIGTERM');
    }
    assert.equal(await main.exited, 0);
  });

  it('in webhook mode the webhook it serves is limited per address: past WEBHOOK_RATE_LIMIT_PER_ADDRESS posts a minute, 429', async () => {
    const { main, url, port } = await startWebhookMain({ WEBHOOK_RATE_LIMIT_PER_ADDRESS: '3' });
    try {
      await main.waitForLog('bot serving its webhook');
      // Forged posts (no secret) are counted like any other: the count comes before the secret is read.
      const post = () => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"update_id":1}' });
      for (let i = 0; i < 3; i++) assert.equal((await post()).status, 401);
      const refused = await post();
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      // The API keeps its own count.
      assert.equal((await fetch(`http://127.0.0.1:${port}/livez`)).status, 200);
    } finally {
      main.child.kill('SIGTERM');
    }
    assert.equal(await main.exited, 0);
  });

  it('refuses to start without BOT_TOKEN and says where to get one', async () => {
    const dir = folder();
    const { BOT_TOKEN: _omitted, ...env } = baseEnv(dir);
    const main = startMain(dir, env);
    assert.equal(await main.exited, 1);
    assert.match(main.output(), /BOT_TOKEN is missing: create a bot with @BotFather/);
  });

  it('refuses a bad setting with a message naming it, before opening anything', async () => {
    const dir = folder();
    const bad = startMain(dir, { ...baseEnv(dir), HTTP_PORT: 'eighty' });
    assert.equal(await bad.exited, 2);
    assert.match(bad.output(), /HTTP_PORT/);
    const webhookWithoutServer = startMain(dir, {
      ...baseEnv(dir),
      BOT_MODE: 'webhook',
      WEBHOOK_URL: 'https://bot.example/hook',
      WEBHOOK_SECRET: 's'.repeat(32),
      HTTP_ENABLED: 'false',
    });
    assert.equal(await webhookWithoutServer.exited, 2);
    assert.match(webhookWithoutServer.output(), /HTTP_ENABLED=true/);
    assert.throws(() => statSync(path.join(dir, 'cards.db')));
  });

  it('a busy HTTP_PORT or METRICS_PORT is refused before anything is created, naming the port', async () => {
    const busy = createNetServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = String((busy.address() as AddressInfo).port);
    try {
      for (const setting of ['HTTP_PORT', 'METRICS_PORT']) {
        const dir = folder();
        const { BOT_TOKEN: _omitted, ...env } = baseEnv(dir);
        const ports: Record<string, string> = setting === 'HTTP_PORT' ? { HTTP_PORT: port } : { HTTP_PORT: '0', METRICS_PORT: port };
        const main = startMain(dir, { ...env, BOT_ENABLED: 'false', ...ports });
        assert.equal(await main.exited, 1, main.output());
        assert.match(main.output(), new RegExp(`${setting}=${port} on [A-Z_]+=127\\.0\\.0\\.1: the port is already in use`), main.output());
        assert.deepEqual(readdirSync(dir), [], 'no database file, no key file');
      }
    } finally {
      await new Promise<void>((resolve) => busy.close(() => resolve()));
    }
  });

  it('runs the HTTP API alone when the bot is off', async () => {
    const dir = folder();
    const { BOT_TOKEN: _omitted, ...env } = baseEnv(dir);
    const mark = server.mark();
    const main = startMain(dir, { ...env, BOT_ENABLED: 'false', HTTP_PORT: '0' });
    try {
      const listening = await main.waitForLog('HTTP API listening');
      assert.equal((await fetch(`${listening.url}/livez`)).status, 200);
      assert.equal(server.calls.slice(mark).length, 0);
    } finally {
      main.child.kill('SIGINT');
    }
    assert.equal(await main.exited, 0);
  });

  it('npm run api serves the HTTP API alone, even with a bot token set', async () => {
    const dir = folder();
    const mark = server.mark();
    const main = startMain(dir, { ...baseEnv(dir), HTTP_PORT: '0' }, API_MAIN);
    try {
      const listening = await main.waitForLog('HTTP API listening');
      assert.equal((await fetch(`${listening.url}/livez`)).status, 200);
      assert.equal(server.calls.slice(mark).length, 0, 'the bot never called Telegram');
    } finally {
      main.child.kill('SIGTERM');
    }
    assert.equal(await main.exited, 0);
  });

  it('a flush of the SQLite log that fails: the write is not answered as done, the process exits 1 saying why, and starts again on a balanced ledger', {
    timeout: 60_000,
  }, async () => {
    const dir = folder();
    const flag = path.join(dir, 'disk-failed');
    const failing = { NODE_OPTIONS: `--import=${path.resolve('test/helpers/failing-flush.mjs')}`, FAIL_FLUSH_FLAG: flag };
    const env = { ...baseEnv(dir), BOT_ENABLED: 'false', HTTP_PORT: '0' };
    const main = startMain(dir, { ...env, ...failing });
    const { url } = await main.waitForLog('HTTP API listening');
    const token = await createUser(dir);
    const call = (route: string, body?: unknown) =>
      fetch(`${url}/api/v1${route}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const bins = (await (await call('/bins')).json()) as { data: { id: string; wallet: boolean }[] };
    const plans = (await (await call('/card-plans')).json()) as { data: { id: number }[] };

    // The disk stops taking writes: the card's commit is written but can never be made durable.
    writeFileSync(flag, '');
    const created = await call('/cards', { bin_id: bins.data.find((b) => !b.wallet)!.id, planId: plans.data[0]!.id, name: 'Lost' }).then(
      (response) => response.status,
      () => undefined,
    );
    // No answer at all (the process exits first) or an error: never "created".
    assert.ok(created === undefined || created >= 500, `answered ${created}`);
    assert.equal(await main.exited, 1);
    const fatal = main.logs.find((line) => line.level === 60);
    assert.match(String(fatal?.msg), /could not be flushed/, main.output());

    // Restarted on a disk that works again: it serves, and every balance agrees with the ledger.
    rmSync(flag);
    const again = startMain(dir, env);
    try {
      const listening = await again.waitForLog('HTTP API listening');
      assert.equal((await fetch(`${listening.url}/readyz`)).status, 200);
      const check = await runAdminCli(dir, baseEnv(dir), 'ledger', 'check');
      assert.equal(check.code, 0, check.output);
      assert.equal(check.json.consistent, true, check.output);
    } finally {
      again.child.kill('SIGTERM');
    }
    assert.equal(await again.exited, 0);
  });

  it('a start Telegram refuses exits 1 and never logs the bot token', async () => {
    const dir = folder();
    // Every call under this root is answered 404, as Telegram answers a bad root.
    const main = startMain(dir, { ...baseEnv(dir), TELEGRAM_API_ROOT: `${apiRoot}/nowhere`, HTTP_ENABLED: 'false' });
    assert.equal(await main.exited, 1);
    assert.match(main.output(), /Could not start/);
    assert.ok(!main.output().includes(BOT_TOKEN.split(':')[1]!), main.output());
  });
});
