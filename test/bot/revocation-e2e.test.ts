import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BotApiServer, type StoredMessage } from '../helpers/bot-api-server.js';
import { runAdminCli, startProcess, type StartedProcess } from '../helpers/processes.js';

// Item 1 of the trust review as an operator meets it: `npm start` in one process, `npm run admin` in others.

describe('revocation from the admin command line, over real Bot API traffic', () => {
  let server: BotApiServer;
  let dir: string;
  let main: StartedProcess;
  let env: Record<string, string>;

  before(async () => {
    server = new BotApiServer();
    const apiRoot = await server.start();
    dir = mkdtempSync(path.join(tmpdir(), 'revocation-e2e-'));
    env = {
      BOT_TOKEN: '123456:REVOKE-test',
      TELEGRAM_API_ROOT: apiRoot,
      DATABASE_URL: path.join(dir, 'cards.db'),
      CARD_DATA_KEY_FILE: path.join(dir, 'card-data.key'),
      HTTP_ENABLED: 'false',
    };
    main = startProcess(dir, env);
    await main.waitForLog('bot polling');
  });

  after(async () => {
    main.child.kill('SIGTERM');
    await main.exited;
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a chat whose token the operator revoked gets no OTP and is told once that it was unlinked', async () => {
    const created = await runAdminCli(dir, env, 'users', 'create', '--name', 'Rita', '--deposit', '100');
    assert.equal(created.code, 0, created.output);
    const { userId, token } = created.json as { userId: string; token: string };
    const rita = server.user(6101);
    const step = rita.send(token);
    await server.nextMessage(rita.chatId, step.mark, 'Linked');

    // A card, made through the API's core from the command line's side: the admin CLI lists it.
    const issued = await runAdminCli(dir, env, 'tokens', 'issue', '--user', userId);
    const second = server.user(6102);
    const linked = second.send(issued.json.token as string);
    const menu = await server.nextMessage(second.chatId, linked.mark, 'Linked');
    await createCardInChat(second, menu);
    const cards = await runAdminCli(dir, env, 'cards', 'list', '--user', userId);
    const card = (cards.json.cards as { id: string }[])[0]!.id;

    const tokens = await runAdminCli(dir, env, 'tokens', 'list', '--user', userId);
    const first = (tokens.json.tokens as { id: string; prefix: string; lastUsedAt: string | null }[])[0]!;
    assert.equal(first.prefix, token.slice(0, 7));
    assert.ok(first.lastUsedAt, 'linking used the token');
    assert.ok(!tokens.output.includes(token), 'no plaintext token is printed');

    const mark = server.mark();
    const revoked = await runAdminCli(dir, env, 'tokens', 'revoke', '--id', first.id);
    assert.deepEqual(revoked.json.unlinkedChats, [6101]);
    const otp = await runAdminCli(dir, env, 'simulate', 'otp', '--card', card);
    assert.equal(otp.code, 0, otp.output);
    await server.nextMessage(6102, mark, String(otp.json.code));
    await server.nextMessage(6101, mark, 'its API token was revoked');
    const second2 = await runAdminCli(dir, env, 'simulate', 'otp', '--card', card);
    await server.nextMessage(6102, mark, String(second2.json.code));

    const toRevoked = server.calls.slice(mark).filter((c) => c.method === 'sendMessage' && Number(c.payload.chat_id) === 6101);
    assert.equal(toRevoked.length, 1, 'told once');
    assert.ok(!toRevoked.some((c) => String(c.payload.text).includes(String(otp.json.code))));
  });

  /** The create flow, tapped through as a cardholder would. */
  async function createCardInChat(chat: ReturnType<BotApiServer['user']>, menu: StoredMessage): Promise<void> {
    let press = chat.press(menu, 'New card');
    const binPrompt = await server.nextMessage(chat.chatId, press.mark, 'Pick a BIN');
    press = chat.press(binPrompt, /Online/);
    const planPrompt = await server.nextMessage(chat.chatId, press.mark, 'Pick a plan');
    press = chat.press(planPrompt, /./);
    await server.nextMessage(chat.chatId, press.mark, 'Name the card');
    const step = chat.send('Revocable');
    const coupon = await server.nextMessage(chat.chatId, step.mark, 'coupon');
    press = chat.press(coupon, 'Skip');
    const summary = await server.nextMessage(chat.chatId, press.mark, 'Creation fee');
    press = chat.press(summary, 'Confirm');
    await server.nextEdit(chat.chatId, press.mark, 'created');
  }
});
