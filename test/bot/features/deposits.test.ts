import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Update } from 'grammy/types';
import { startBackgroundJobs } from '../../../src/bot/jobs/background-jobs.js';
import { runAdmin } from '../../../src/admin/run.js';
import { newCustomer } from '../../helpers/core.js';
import { BOT_INFO, callbackUpdate, textUpdate } from '../../helpers/updates.js';
import { buttonData } from '../conversations/kit.js';
import { createHarness, type Harness, texts } from '../harness.js';

const ADMIN_CHAT = -9001;
const ADMIN = 42;
const admin = { id: ADMIN, groupId: ADMIN_CHAT };
const config = { adminChatId: ADMIN_CHAT, adminUserIds: [ADMIN, 43] };

/** A cardholder whose chat was linked in `languageCode`. */
async function cardholder(h: Harness, chatId: number, languageCode = 'en', deposit = 1_000) {
  const customer = await newCustomer(h.t, deposit);
  await h.send(textUpdate({ id: chatId, languageCode }, `/link ${customer.token}`));
  return customer;
}

/** Asks for `amount` with `/deposit` and chooses to ask the admins; returns the calls of the choice. */
async function requestDeposit(h: Harness, chatId: number, command: string) {
  const offer = await h.send(textUpdate({ id: chatId }, command));
  return h.send(callbackUpdate({ id: chatId }, buttonData(offer, 'Ask an administrator')));
}

const sentTo = (calls: { method: string; payload: Record<string, any> }[], chatId: number) =>
  calls.filter((c) => c.method === 'sendMessage' && Number(c.payload.chat_id) === chatId);

/** What `chatId` was shown: messages sent, and the pressed message edited in place (a choice's answer takes the offer's place). */
const shownIn = (calls: { method: string; payload: Record<string, any> }[], chatId: number) =>
  calls.filter((c) => (c.method === 'sendMessage' || c.method === 'editMessageText') && Number(c.payload.chat_id) === chatId);

/**
 * Runs the bot's background jobs (the outbox among them) until `chatId` got a message matching `pattern`;
 * returns the texts it got since `mark`.
 */
async function pushedTo(h: Harness, chatId: number, pattern: RegExp, mark: number): Promise<string[]> {
  const jobs = startBackgroundJobs(h.bot);
  try {
    await h.waitFor(
      (c) => c.method === 'sendMessage' && Number(c.payload.chat_id) === chatId && pattern.test(String(c.payload.text)),
      mark,
    );
  } finally {
    await jobs.stop();
  }
  return texts(sentTo(h.since(mark), chatId));
}

/** A message in the admins' chat replying to the bot's message `messageId`. */
function replyUpdate(from: { id: number; groupId: number }, messageId: number, text: string): Update {
  const update = textUpdate(from, text);
  (update.message as unknown as Record<string, unknown>).reply_to_message = {
    message_id: messageId,
    date: 1_700_000_000,
    chat: { id: from.groupId, type: 'group', title: 'Group' },
    from: BOT_INFO,
    text: 'prompt',
  };
  return update;
}

describe('deposit requests from chat', () => {
  it('/deposit alone shows the limits, amounts to pick and how to add a note', async () => {
    const h = await createHarness({ config });
    await cardholder(h, 7101);
    const calls = await h.send(textUpdate({ id: 7101 }, '/deposit'));
    assert.match(texts(calls).join('\n'), /from \$5\.00 to \$10,000\.00[\s\S]*\/deposit 250 wire ref 8812/);
    assert.equal(buttonData(calls, /^\$50$/), 'dp:a:5000');
  });

  it("with no admins' chat, a request is recorded and the cardholder is told the operator decides it, not that admins were sent it", async () => {
    const { adminChatId: _none, ...noAdminChat } = config;
    const h = await createHarness({ config: noAdminChat });
    await cardholder(h, 7109);
    const offer = await h.send(textUpdate({ id: 7109 }, '/deposit 40'));
    const calls = await h.send(callbackUpdate({ id: 7109 }, buttonData(offer, 'Record a request for the operator')));
    const said = texts(shownIn(calls, 7109)).join('\n');
    assert.match(said, /for \$40\.00 is recorded; the service's operator decides such requests from their command line/);
    assert.doesNotMatch(said, /sent to the administrators/);
  });

  it('a request with a note is stored, acknowledged, and posted to the admins with Approve and Reject', async () => {
    const h = await createHarness({ config });
    const alice = await cardholder(h, 7102);
    const offer = await h.send(textUpdate({ id: 7102 }, '/deposit 50 wire ref 8812'));
    assert.match(texts(offer).join('\n'), /Add \$50\.00 to your wallet\?\nNote for the administrators: wire ref 8812/);
    assert.throws(() => buttonData(offer, 'Pay now'), /no button/, 'no invoice without PAYMENT_PROVIDER_TOKEN');
    const calls = await h.send(callbackUpdate({ id: 7102 }, buttonData(offer, 'Ask an administrator')));
    const [request] = await h.t.funding.deposits.list({ userId: alice.userId });
    assert.equal(request?.amount, 5_000);
    assert.equal(request?.note, 'wire ref 8812');
    assert.match(texts(shownIn(calls, 7102)).join('\n'), new RegExp(`Request #${request!.id} for \\$50\\.00 sent to the administrators`));
    const [card] = sentTo(calls, ADMIN_CHAT);
    assert.match(
      String(card?.payload.text),
      new RegExp(`Deposit request #${request!.id}\\nFrom: Alice \\(user ${alice.userId}\\)\\nAmount: \\$50\\.00\\nNote: wire ref 8812`),
    );
    assert.deepEqual(
      card?.payload.reply_markup.inline_keyboard.flat().map((b: { callback_data: string }) => b.callback_data),
      [`dr:a:${request!.id}`, `dr:r:${request!.id}`],
    );
    assert.equal((await h.t.core.walletBalance(alice.caller)).balance, 1_000);
  });

  it('a double tap on the choice asks once; the second tap is an expired button', async () => {
    const h = await createHarness({ config });
    const alice = await cardholder(h, 7103);
    const offer = await h.send(textUpdate({ id: 7103 }, '/deposit 50'));
    const press = buttonData(offer, 'Ask an administrator');
    await h.send(callbackUpdate({ id: 7103 }, press));
    const again = await h.send(callbackUpdate({ id: 7103 }, press));
    assert.equal(
      again.find((c) => c.method === 'answerCallbackQuery')?.payload.text,
      'This button has expired. Open the menu again: /menu',
    );
    assert.equal((await h.t.funding.deposits.list({ userId: alice.userId })).length, 1);
  });

  it('a bad amount or note is refused with the rule, and nothing is stored', async () => {
    const h = await createHarness({ config });
    const alice = await cardholder(h, 7104);
    assert.match(texts(await h.send(textUpdate({ id: 7104 }, '/deposit 3'))).join('\n'), /Minimum amount is \$5\.00\. Send \/deposit/);
    assert.match(texts(await h.send(textUpdate({ id: 7104 }, '/deposit 10.999'))).join('\n'), /2 decimal/);
    assert.match(texts(await h.send(textUpdate({ id: 7104 }, '/deposit lots'))).join('\n'), /must be a number/);
    assert.match(texts(await h.send(textUpdate({ id: 7104 }, `/deposit 50 ${'x'.repeat(201)}`))).join('\n'), /at most 200 characters/);
    assert.match(texts(await h.send(callbackUpdate({ id: 7104 }, 'dp:a:1'))).join('\n'), /Minimum amount/, 'a tampered amount button');
    assert.deepEqual(await h.t.funding.deposits.list({ userId: alice.userId }), []);
  });

  it('an unlinked chat cannot ask', async () => {
    const h = await createHarness({ config });
    const calls = await h.send(textUpdate({ id: 7105 }, '/deposit 50'));
    assert.match(texts(calls).join('\n'), /not linked yet/);
    assert.deepEqual(await h.t.funding.deposits.list(), []);
  });
});

describe("deciding deposit requests in the admins' chat", () => {
  it('Approve credits the wallet once, redraws the card, and tells the cardholder once, through the outbox, in their language', async () => {
    const h = await createHarness({ config });
    const olga = await cardholder(h, 7201, 'ru');
    await requestDeposit(h, 7201, '/deposit 50');
    const [request] = await h.t.funding.deposits.list({ userId: olga.userId });
    const mark = h.calls.length;
    const calls = await h.send(callbackUpdate({ ...admin }, `dr:a:${request!.id}`, 555));
    assert.equal((await h.t.core.walletBalance(olga.caller)).balance, 6_000);
    assert.equal(calls.find((c) => c.method === 'answerCallbackQuery')?.payload.text, `Request #${request!.id} approved.`);
    const edit = calls.find((c) => c.method === 'editMessageText');
    assert.equal(edit?.payload.message_id, 555);
    assert.match(String(edit?.payload.text), /Approved by Alice: \$50\.00 credited to the wallet\./);
    assert.equal(edit?.payload.reply_markup, undefined, 'no buttons left');
    assert.equal(shownIn(calls, 7201).length, 0, 'not told directly: the outbox tells every linked chat');
    assert.equal((await h.t.funding.deposits.get(request!.id)).decidedBy, `telegram:${ADMIN}`);

    const again = await h.send(callbackUpdate({ id: 43, groupId: ADMIN_CHAT }, `dr:a:${request!.id}`, 555));
    assert.equal(
      again.find((c) => c.method === 'answerCallbackQuery')?.payload.text,
      `Deposit request #${request!.id} was already approved.`,
    );
    assert.equal(shownIn(again, 7201).length, 0);
    const told = await pushedTo(h, 7201, /одобрена/, mark);
    assert.equal(told.length, 1, 'the cardholder is told once');
    assert.match(told[0]!, new RegExp(`заявка на пополнение №${request!.id} на 50,00\\s\\$ одобрена. Баланс кошелька: 60,00\\s\\$`));
    assert.equal((await h.t.core.walletBalance(olga.caller)).balance, 6_000);
    assert.deepEqual((await h.t.admin.checkLedger()).differences, []);
  });

  it('someone not in ADMIN_USER_IDS is told so, and nothing changes', async () => {
    const h = await createHarness({ config });
    const alice = await cardholder(h, 7202);
    await requestDeposit(h, 7202, '/deposit 50');
    const [request] = await h.t.funding.deposits.list({ userId: alice.userId });
    const stranger = { id: 99, groupId: ADMIN_CHAT };
    for (const data of [`dr:a:${request!.id}`, `dr:x:${request!.id}:nr`, `dr:r:${request!.id}`]) {
      const calls = await h.send(callbackUpdate(stranger, data));
      const answer = calls.find((c) => c.method === 'answerCallbackQuery');
      assert.equal(answer?.payload.text, "Only the service's administrators can do this.");
      assert.equal(calls.filter((c) => c.method !== 'answerCallbackQuery').length, 0);
    }
    assert.match(texts(await h.send(textUpdate(stranger, '/stats'))).join('\n'), /Only the service's administrators/);
    assert.equal((await h.t.funding.deposits.get(request!.id)).status, 'pending');
    assert.equal((await h.t.core.walletBalance(alice.caller)).balance, 1_000);
  });

  it('Reject offers preset reasons; one press rejects and the cardholder reads it in their language', async () => {
    const h = await createHarness({ config });
    const olga = await cardholder(h, 7203, 'ru');
    await requestDeposit(h, 7203, '/deposit 50');
    const [request] = await h.t.funding.deposits.list({ userId: olga.userId });
    const reasons = await h.send(callbackUpdate(admin, `dr:r:${request!.id}`, 556));
    const markup = reasons.find((c) => c.method === 'editMessageReplyMarkup')?.payload.reply_markup;
    assert.deepEqual(
      markup.inline_keyboard.flat().map((b: { text: string }) => b.text),
      ['Payment not received', 'Amount does not match the payment', 'Duplicate request', '✍️ Another reason…', '⬅️ Back'],
    );
    const mark = h.calls.length;
    const calls = await h.send(callbackUpdate(admin, buttonData(reasons, 'Payment not received'), 556));
    const stored = await h.t.funding.deposits.get(request!.id);
    assert.equal(stored.status, 'rejected');
    assert.equal(stored.reason, 'Payment not received');
    assert.match(String(calls.find((c) => c.method === 'editMessageText')?.payload.text), /Rejected by Alice: Payment not received/);
    assert.equal(shownIn(calls, 7203).length, 0);
    const told = await pushedTo(h, 7203, /отклонена/, mark);
    assert.equal(told.length, 1);
    assert.match(told[0]!, /отклонена: Платёж не поступил\. Ничего не зачислено\./);
    assert.equal((await h.t.core.walletBalance(olga.caller)).balance, 1_000);
  });

  it('another reason is typed as a reply to the prompt, and reaches the cardholder as typed', async () => {
    const h = await createHarness({ config });
    const alice = await cardholder(h, 7204);
    await requestDeposit(h, 7204, '/deposit 75');
    const [request] = await h.t.funding.deposits.list({ userId: alice.userId });
    const prompt = await h.send(callbackUpdate(admin, `dr:o:${request!.id}`, 557));
    const ask = sentTo(prompt, ADMIN_CHAT)[0];
    assert.match(String(ask?.payload.text), new RegExp(`reason for rejecting request #${request!.id}`));
    assert.equal(ask?.payload.reply_markup.force_reply, true);
    const key = await h.t.database.db
      .withTables<{ bot_kv: { key: string; value: string } }>()
      .selectFrom('bot_kv')
      .select('key')
      .where('key', 'like', `deposit-reason:${ADMIN_CHAT}:%`)
      .executeTakeFirstOrThrow();
    const promptId = Number(key.key.split(':').pop());

    const stranger = await h.send(replyUpdate({ id: 99, groupId: ADMIN_CHAT }, promptId, 'I say no'));
    assert.match(texts(stranger).join('\n'), /Only the service's administrators/);
    assert.equal((await h.t.funding.deposits.get(request!.id)).status, 'pending');

    const mark = h.calls.length;
    const calls = await h.send(replyUpdate(admin, promptId, 'The transfer came from another name'));
    assert.equal((await h.t.funding.deposits.get(request!.id)).reason, 'The transfer came from another name');
    assert.match(texts(sentTo(calls, ADMIN_CHAT)).join('\n'), new RegExp(`Request #${request!.id} rejected\\.`));
    const edit = calls.find((c) => c.method === 'editMessageText');
    assert.equal(edit?.payload.message_id, 557);
    assert.equal(shownIn(calls, 7204).length, 0);
    const late = await h.send(replyUpdate(admin, promptId, 'again'));
    assert.equal(texts(late).length, 0, 'the prompt is used up');
    const told = await pushedTo(h, 7204, /was rejected/, mark);
    assert.deepEqual(told, [
      `❌ Your deposit request #${request!.id} for $75.00 was rejected: The transfer came from another name. Nothing was credited.`,
    ]);
  });

  it('a request decided from the command line reads as decided when pressed in the chat', async () => {
    const h = await createHarness({ config });
    const alice = await cardholder(h, 7205);
    await requestDeposit(h, 7205, '/deposit 50');
    const [request] = await h.t.funding.deposits.list({ userId: alice.userId });
    await h.t.funding.deposits.reject(request!.id, 'admin-cli', 'duplicate');
    const calls = await h.send(callbackUpdate(admin, `dr:a:${request!.id}`, 558));
    assert.equal(
      calls.find((c) => c.method === 'answerCallbackQuery')?.payload.text,
      `Deposit request #${request!.id} was already rejected.`,
    );
    assert.match(String(calls.find((c) => c.method === 'editMessageText')?.payload.text), /Rejected by admin-cli: duplicate/);
    assert.equal((await h.t.core.walletBalance(alice.caller)).balance, 1_000);
  });

  it('a decision from the command line reaches every chat linked to the cardholder, once each, in its language', async () => {
    const h = await createHarness({ config });
    const olga = await cardholder(h, 7207, 'ru', 0);
    await h.send(textUpdate({ id: 7208, languageCode: 'en' }, `/link ${olga.token}`));
    const approved = await h.t.funding.deposits.request({ userId: olga.userId, amount: 5_000, chatId: 7207 });
    const rejected = await h.t.funding.deposits.request({ userId: olga.userId, amount: 2_500, chatId: 7207 });
    const mark = h.calls.length;
    const cli = async (...argv: string[]) => {
      const code = await runAdmin(argv, async () => ({ ...h.t, close: async () => {} }), { out: () => undefined, err: () => undefined });
      assert.equal(code, 0);
    };
    await cli('deposits', 'approve', '--id', String(approved.id));
    // Another process, as the command line is: the core's service on its own, the bot not running.
    await h.t.funding.deposits.reject(rejected.id, 'admin-cli', 'Duplicate request');
    const russian = await pushedTo(h, 7207, /отклонена/, mark);
    const english = await pushedTo(h, 7208, /was rejected/, mark);
    assert.deepEqual(russian, [
      `✅ Ваша заявка на пополнение №${approved.id} на 50,00\u00a0$ одобрена. Баланс кошелька: 50,00\u00a0$.`,
      `❌ Ваша заявка на пополнение №${rejected.id} на 25,00\u00a0$ отклонена: Повторная заявка. Ничего не зачислено.`,
    ]);
    assert.deepEqual(english, [
      `✅ Your deposit request #${approved.id} for $50.00 was approved. Wallet balance: $50.00.`,
      `❌ Your deposit request #${rejected.id} for $25.00 was rejected: Duplicate request. Nothing was credited.`,
    ]);
    assert.equal(sentTo(h.since(mark), ADMIN_CHAT).length, 0);
    assert.equal(
      await h.t.database.db
        .selectFrom('outbox')
        .select('seq')
        .where('delivered_at', 'is', null)
        .execute()
        .then((r) => r.length),
      0,
    );
  });

  it('two admins approving at once credit the wallet once', async () => {
    const h = await createHarness({ config });
    const alice = await cardholder(h, 7206, 'en', 0);
    await requestDeposit(h, 7206, '/deposit 50');
    const [request] = await h.t.funding.deposits.list({ userId: alice.userId });
    await Promise.all([
      h.send(callbackUpdate(admin, `dr:a:${request!.id}`, 559)),
      h.send(callbackUpdate({ id: 43, groupId: ADMIN_CHAT }, `dr:a:${request!.id}`, 559)),
    ]);
    assert.equal((await h.t.core.walletBalance(alice.caller)).balance, 5_000);
    assert.deepEqual((await h.t.admin.checkLedger()).differences, []);
  });

  it('/stats shows users, cards, money held, fees today and pending requests, in the admin’s language', async () => {
    const h = await createHarness({ config });
    const alice = await cardholder(h, 7207, 'en', 20_000);
    await requestDeposit(h, 7207, '/deposit 50');
    const en = texts(await h.send(textUpdate(admin, '/stats'))).join('\n');
    assert.match(
      en,
      /The service on 2026-03-01 \(UTC\)\nUsers: 1\nCards: 0 active, 0 frozen, 0 closed\nIn wallets: \$200\.00; on cards: \$0\.00\nFees earned today: \$0\.00\nDeposit requests waiting: 1 \(\$50\.00\)/,
    );
    const ru = texts(await h.send(textUpdate({ ...admin, languageCode: 'ru' }, '/stats'))).join('\n');
    assert.match(ru, /Пользователи: 1/);
    assert.ok(alice.userId);
  });

  it('in any other group /stats gets the one-line group answer', async () => {
    const h = await createHarness({ config });
    const calls = await h.send(textUpdate({ id: ADMIN, groupId: -5555 }, '/stats'));
    assert.deepEqual(texts(calls), ['I only work in a private chat with you.']);
  });
});
