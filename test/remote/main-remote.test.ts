import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BotApiServer } from '../helpers/bot-api-server.js';
import { FakeCardService } from '../helpers/fake-card-service.js';
import { ENTRY, runAdminCli, type StartedProcess, startProcess } from '../helpers/processes.js';

// `npm start` with CARD_SERVICE_URL, as an operator runs it: the bot alone in front of another service; then
// in front of our own `npm run api` in a second process, as any other service that speaks the interface.

describe('npm start in remote mode (CARD_SERVICE_URL)', { timeout: 120_000 }, () => {
  let server: BotApiServer;
  let apiRoot: string;
  let fake: FakeCardService;
  const dirs: string[] = [];
  const processes: StartedProcess[] = [];
  const folder = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'remote-main-'));
    dirs.push(dir);
    return dir;
  };
  const start = (dir: string, env: Record<string, string>, script = ENTRY.main) => {
    const started = startProcess(
      dir,
      { DATABASE_URL: path.join(dir, 'cards.db'), CARD_DATA_KEY_FILE: path.join(dir, 'key'), ...env },
      script,
    );
    processes.push(started);
    return started;
  };

  before(async () => {
    server = new BotApiServer();
    apiRoot = await server.start();
    fake = await new FakeCardService().listen();
  });
  after(async () => {
    for (const p of processes) p.child.kill('SIGTERM');
    await Promise.all(processes.map((p) => p.exited));
    await fake.close();
    await server.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('serves no /api/v1 of its own, names the service in /readyz, links a chat with the service token, keeps it across a restart', async () => {
    const dir = folder();
    const bot = start(dir, { BOT_TOKEN: '123456:REMOTE-main', TELEGRAM_API_ROOT: apiRoot, HTTP_PORT: '0', CARD_SERVICE_URL: fake.url });
    const listening = await bot.waitForLog('HTTP API listening');
    await bot.waitForLog('bot polling');
    assert.equal((await fetch(`${listening.url}/api/v1/health`, { headers: { authorization: 'Bearer x' } })).status, 404);
    assert.equal((await fetch(`${listening.url}/api/v1/openapi.json`)).status, 404);
    const ready = await fetch(`${listening.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(((await ready.json()) as { data: unknown }).data, {
      status: 'ready',
      checks: { database: 'ok', migrations: 'ok', bot: 'ok', cardService: 'ok' },
    });
    const token = fake.addUser('earlier', 4_200);
    const user = server.user(9201);
    let step = user.send(token);
    const menu = await server.nextMessage(user.chatId, step.mark, 'Linked');
    const press = user.press(menu, 'Wallet');
    await server.nextEdit(user.chatId, press.mark, 'Wallet balance: $42.00');
    assert.ok(!bot.output().includes(token), 'the token never reaches the log');

    // The service goes down: /readyz says so, and the bot stays up.
    fake.down = true;
    step = user.send('/menu');
    const again = await server.nextMessage(user.chatId, step.mark, 'Main menu');
    const down = user.press(again, 'Wallet');
    await server.nextMessage(user.chatId, down.mark, 'The card service is not answering');
    assert.equal((await fetch(`${listening.url}/readyz`)).status, 503);
    fake.down = false;
    assert.equal((await fetch(`${listening.url}/readyz`)).status, 200);

    // A restart: the link (its token sealed in the database) still works.
    bot.child.kill('SIGTERM');
    assert.equal(await bot.exited, 0);
    const restarted = start(dir, {
      BOT_TOKEN: '123456:REMOTE-main',
      TELEGRAM_API_ROOT: apiRoot,
      HTTP_ENABLED: 'false',
      CARD_SERVICE_URL: fake.url,
    });
    await restarted.waitForLog('bot polling');
    step = user.send('/menu');
    const after = await server.nextMessage(user.chatId, step.mark, 'Main menu');
    const wallet = user.press(after, 'Wallet');
    await server.nextEdit(user.chatId, wallet.mark, 'Wallet balance: $42.00');

    // The admin command line keeps to what concerns the bot.
    const env = { DATABASE_URL: path.join(dir, 'cards.db'), CARD_DATA_KEY_FILE: path.join(dir, 'key'), CARD_SERVICE_URL: fake.url };
    const refused = await runAdminCli(dir, env, 'users', 'list');
    assert.equal(refused.code, 2);
    assert.match(refused.json.error, /works on the embedded core only/);
    const links = await runAdminCli(dir, env, 'links', 'list');
    assert.equal(links.code, 0, links.output);
    assert.equal((links.json.links as unknown[]).length, 1);
  });

  it('stands in front of our own npm run api in another process, like any service that speaks the interface', async () => {
    const apiDir = folder();
    const api = start(apiDir, { HTTP_PORT: '0', BOT_ENABLED: 'false' }, ENTRY.api);
    const listening = await api.waitForLog('HTTP API listening');
    const created = await runAdminCli(
      apiDir,
      { DATABASE_URL: path.join(apiDir, 'cards.db'), CARD_DATA_KEY_FILE: path.join(apiDir, 'key') },
      'users',
      'create',
      '--name',
      'Ours',
      '--deposit',
      '75',
    );
    assert.equal(created.code, 0, created.output);
    const token = created.json.token as string;

    const botDir = folder();
    const bot = start(botDir, {
      BOT_TOKEN: '123456:REMOTE-ours',
      TELEGRAM_API_ROOT: apiRoot,
      HTTP_ENABLED: 'false',
      CARD_SERVICE_URL: listening.url as string,
    });
    await bot.waitForLog('bot polling');
    const user = server.user(9202);
    // Our own token's shape: caught as a pasted token, deleted, and linked through the other process.
    const step = user.send(`here it is: ${token}`);
    const menu = await server.nextMessage(user.chatId, step.mark, 'Linked');
    const press = user.press(menu, 'Wallet');
    await server.nextEdit(user.chatId, press.mark, 'Wallet balance: $75.00');
  });
});
