import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openChallenge } from '../../src/core/operations/challenges.js';
import type { StoredMessage } from '../helpers/bot-api-server.js';
import { TEST_CARD_DATA_KEY } from '../helpers/core.js';
import { type E2eBot, startE2eBot } from '../helpers/e2e-bot.js';
import { ENTRY, startProcess } from '../helpers/processes.js';

// Issue 33, section 5, as its users meet it: the operator's `simulate 3ds` (a process of its own) asks, the
// cardholder taps in chat (the bot, over the Bot API test server), the command prints the answer.

describe('purchase approval in chat, end to end', () => {
  let bot: E2eBot;
  let env: Record<string, string>;

  before(async () => {
    bot = await startE2eBot('challenges-e2e');
    // The admin command line in another process, on the same database and card-data key.
    const keys = path.join(bot.dir, 'keys');
    mkdirSync(keys, { mode: 0o700 });
    writeFileSync(path.join(keys, 'card-data.key'), TEST_CARD_DATA_KEY.toString('base64'), { mode: 0o600 });
    env = { DATABASE_URL: path.join(bot.dir, 'cards.db'), CARD_DATA_KEY_FILE: path.join(keys, 'card-data.key'), LOG_LEVEL: 'warn' };
  });
  after(() => bot.stop());

  /** A linked chat (`languageCode` its language) of a new user with one active card. */
  async function cardholder(chatId: number, languageCode = 'en') {
    const { runtime, server } = bot;
    const { token } = await runtime.admin.createUser({ name: `User ${chatId}`, deposit: 100_000 });
    const chat = server.user(chatId, { languageCode });
    const step = chat.send(token);
    await server.nextMessage(chat.chatId, step.mark, /Linked|Привязано|привязан/i);
    const caller = await runtime.core.authenticate(token);
    const [bin] = await runtime.core.listBins();
    const [plan] = await runtime.core.listPlans();
    const card = await runtime.core.createCard(caller, { bin_id: bin!.id, planId: plan!.id, name: 'Games' });
    return { chat, caller, card };
  }

  /** `cards-admin simulate 3ds …` in a process of its own; its exit code and what it printed. */
  function simulate3ds(...args: string[]) {
    const started = startProcess(bot.dir, env, ENTRY.admin, ['simulate', '3ds', ...args]);
    return started.exited.then((code) => ({ code, stdout: started.stdout().trim(), output: started.output() }));
  }

  const buttons = (m: StoredMessage) => (m.replyMarkup?.inline_keyboard ?? []).flat().map((b) => b.text);
  const stored = (id: string) =>
    bot.runtime.database.db.selectFrom('card_challenges').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('the CLI waits; Approve tapped in chat answers it once: the CLI prints approved, the message says ✅ Approved', async () => {
    const { server } = bot;
    const { chat, caller, card } = await cardholder(7301);
    const mark = server.mark();
    const answered = simulate3ds('--card', card.id, '--amount', '42.10', '--merchant', 'STEAM');
    const push = await server.nextMessage(chat.chatId, mark, 'Approve $42.10 at STEAM?');
    assert.match(push.text, new RegExp(`“Games” \\(${card.maskedPan.replace(/[*]/g, '\\*')}\\)`));
    assert.deepEqual(buttons(push), ['✅ Approve', '❌ Decline']);

    const tap = chat.press(push, 'Approve');
    const edited = await server.nextEdit(chat.chatId, tap.mark, '✅ Approved');
    assert.equal(edited.messageId, push.messageId);
    assert.deepEqual(buttons(edited), [], 'the buttons are gone');
    const result = await answered;
    assert.equal(result.code, 0, result.output);
    assert.equal(result.stdout, 'approved');

    // A second tap (an old copy of the message, Decline this time) records nothing.
    const [challenge] = await bot.runtime.core.listChallenges(caller, card.id);
    const again = chat.pressData(push, `3ds:d:${challenge!.id}`);
    const notice = await server.waitForCall((c) => c.method === 'answerCallbackQuery' && c.payload.callback_query_id === again.queryId);
    assert.equal(notice.payload.text, 'Already answered.');
    assert.equal((await stored(challenge!.id)).status, 'approved');
  });

  it('unanswered, the CLI ends at the expiry printing expired (--json too); a tap afterwards edits the message to expired and records nothing', async () => {
    const { server } = bot;
    const { chat, card } = await cardholder(7302, 'ru');
    const mark = server.mark();
    const waited = simulate3ds('--card', card.id, '--amount', '5', '--merchant', 'STEAM', '--valid-for', '1', '--json');
    const push = await server.nextMessage(chat.chatId, mark, /Подтвердить оплату 5,00\s\$ в STEAM\?/);
    assert.deepEqual(buttons(push), ['✅ Подтвердить', '❌ Отклонить']);
    const result = await waited;
    assert.equal(result.code, 0, result.output);
    const json = JSON.parse(result.stdout) as { ok: boolean; outcome: string; challengeId: string };
    assert.deepEqual({ ok: json.ok, outcome: json.outcome }, { ok: true, outcome: 'expired' });

    const tap = chat.press(push, 'Подтвердить');
    const edited = await server.nextEdit(chat.chatId, tap.mark, '⌛ Истекло');
    assert.deepEqual(buttons(edited), []);
    const notice = await server.waitForCall((c) => c.method === 'answerCallbackQuery' && c.payload.callback_query_id === tap.queryId);
    assert.match(String(notice.payload.text), /Поздно/);
    const row = await stored(json.challengeId);
    assert.deepEqual({ status: row.status, answeredAt: row.answered_at }, { status: 'expired', answeredAt: null });
  });

  const endings = [
    { how: 'whose link was removed', chatId: 7303, end: (chatId: number) => bot.runtime.admin.removeLink(chatId) },
    { how: 'whose token was revoked', chatId: 7304, end: (_chatId: number, userId: string) => bot.runtime.admin.revokeAllTokens(userId) },
  ];
  for (const { how, chatId, end } of endings) {
    it(`a chat ${how} answers nothing: the tap gets a short notice and no answer is recorded`, async () => {
      const { server, runtime } = bot;
      const { chat, caller, card } = await cardholder(chatId);
      const row = await runtime.database.db.selectFrom('cards').selectAll().where('id', '=', card.id).executeTakeFirstOrThrow();
      const mark = server.mark();
      const challenge = await openChallenge({ db: runtime.database.db, clock: { now: () => new Date() } }, row, {
        amount: 1_000,
        merchant: 'SHOP',
      });
      const push = await server.nextMessage(chat.chatId, mark, 'Approve $10.00 at SHOP?');
      await end(chat.chatId, caller.userId);

      const tap = chat.press(push, 'Approve');
      const notice = await server.waitForCall((c) => c.method === 'answerCallbackQuery' && c.payload.callback_query_id === tap.queryId);
      assert.match(String(notice.payload.text), /not linked/);
      const stillPending = await stored(challenge.id);
      assert.deepEqual({ status: stillPending.status, answeredAt: stillPending.answered_at }, { status: 'pending', answeredAt: null });
    });
  }
});
