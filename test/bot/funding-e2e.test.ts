import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runAdmin } from '../../src/admin/run.js';
import { startCore, type CoreRuntime } from '../../src/app/compose.js';
import { systemClock } from '../../src/infra/clock.js';
import { ALLOWED_UPDATES } from '../../src/bot/runtime/update-types.js';
import { type E2eBot, startE2eBot } from '../helpers/e2e-bot.js';
import type { BotApiServer, ScriptedUser } from '../helpers/bot-api-server.js';
import { TEST_CARD_DATA_KEY } from '../helpers/core.js';

const BOT_TOKEN = '123456:TEST-token';
const PROVIDER_TOKEN = '284685063:TEST:provider';
const ADMIN_CHAT = -9001;
const ADMIN = 42;

describe('money in from chat, over real Bot API traffic', () => {
  let e2e: E2eBot | undefined;
  let dir: string;
  let server: BotApiServer;
  let runtime: CoreRuntime;

  before(async () => {
    ({ dir, server, runtime } = e2e = await startE2eBot('bot-funding', {
      token: BOT_TOKEN,
      adminChatId: ADMIN_CHAT,
      adminUserIds: [ADMIN],
      paymentProviderToken: PROVIDER_TOKEN,
    }));
  });

  after(() => e2e?.stop());

  /** A user with a wallet of `deposit` cents whose private chat is linked. */
  async function linked(user: ScriptedUser, deposit = 0) {
    const { userId, token } = await runtime.admin.createUser({ name: user.firstName, deposit });
    const step = user.send(token);
    await server.nextMessage(user.chatId, step.mark, /Linked|привязан/);
    return { userId, caller: await runtime.core.authenticate(token) };
  }

  /** The bot's answer to a pre-checkout query, once it came. */
  async function checkoutAnswer(step: { mark: number; queryId: string }) {
    await server.waitForCall((c) => c.method === 'answerPreCheckoutQuery' && c.payload.pre_checkout_query_id === step.queryId, step.mark);
    return server.checkoutAnswers.get(step.queryId)!;
  }

  it('asks Telegram for pre-checkout queries', async () => {
    while (server.lastPoll === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(server.lastPoll.allowed_updates.includes('pre_checkout_query'), JSON.stringify(server.lastPoll));
    assert.ok((ALLOWED_UPDATES as readonly string[]).includes('pre_checkout_query'));
  });

  it('pays by invoice: a checkout for other money is refused, the payment credits once, a repeated update nothing', async () => {
    const alice = server.user(3001, { firstName: 'Alice' });
    const account = await linked(alice, 1_000);

    let step = alice.send('/deposit 50');
    const offer = await server.nextMessage(alice.chatId, step.mark, 'Add $50.00 to your wallet?');
    let press = alice.press(offer, 'Pay now');
    const sent = await server.waitForCall((c) => c.method === 'sendInvoice', press.mark);
    assert.equal(sent.payload.currency, 'USD');
    assert.deepEqual(sent.payload.prices, [{ label: 'Wallet top-up', amount: 5_000 }]);
    assert.equal(sent.payload.provider_token, PROVIDER_TOKEN);
    const invoice = server.message(alice.chatId, (sent.result as { message_id: number }).message_id)!;
    assert.match(invoice.invoice!.payload, /^wi:[0-9a-f-]{36}$/);

    // Telegram asks before taking the money: another amount, another currency, a payload not ours are refused.
    let answer = await checkoutAnswer(alice.checkout(invoice, { totalAmount: 4_000 }));
    assert.deepEqual(answer, { ok: false, errorMessage: 'The amount does not match the invoice. Ask for a new invoice.' });
    answer = await checkoutAnswer(alice.checkout(invoice, { currency: 'EUR' }));
    assert.equal(answer.ok, false);
    answer = await checkoutAnswer(alice.checkout(invoice, { payload: 'wi:00000000-0000-4000-8000-000000000000' }));
    assert.deepEqual(answer, { ok: false, errorMessage: 'This invoice is not known. Ask for a new one with /deposit.' });
    assert.equal((await runtime.core.walletBalance(account.caller)).balance, 1_000);

    answer = await checkoutAnswer(alice.checkout(invoice));
    assert.deepEqual(answer, { ok: true });

    step = alice.paid(invoice, 'charge-0001');
    await server.nextMessage(alice.chatId, step.mark, 'Thank you! $50.00 was added to your wallet.');
    assert.equal((await runtime.core.walletBalance(account.caller)).balance, 6_000);

    // The same successful_payment again (a repeated update): nothing is credited, nothing said.
    step = alice.paid(invoice, 'charge-0001');
    const after = alice.send('/deposit');
    await server.nextMessage(alice.chatId, after.mark, 'Add money to your wallet');
    assert.equal(
      server.calls.slice(step.mark).filter((c) => c.method === 'sendMessage' && /Thank you/.test(String(c.payload.text))).length,
      0,
    );
    assert.equal((await runtime.core.walletBalance(account.caller)).balance, 6_000);

    // A second payment of the paid invoice (another charge id, as a client paying twice would bring):
    // nothing credited; the cardholder is told, the admins' chat asked to refund it.
    step = alice.paid(invoice, 'charge-0002');
    await server.nextMessage(alice.chatId, step.mark, /paid already.*this second payment added nothing/);
    const report = await server.nextMessage(ADMIN_CHAT, step.mark, /charge-0002/);
    assert.match(report.text, /refund/);
    assert.equal((await runtime.core.walletBalance(account.caller)).balance, 6_000);
    const [listed] = await runtime.funding.payments.listInvoices({ userId: account.userId });
    assert.deepEqual([listed!.status, listed!.owedBack], ['credited', 1]);

    // A paid invoice cannot be paid again.
    answer = await checkoutAnswer(alice.checkout(invoice));
    assert.deepEqual(answer, { ok: false, errorMessage: 'This invoice is paid already.' });

    // Someone else, linked or not, cannot pay Alice's invoice.
    const bob = server.user(3002, { firstName: 'Bob' });
    answer = await checkoutAnswer(bob.checkout(invoice));
    assert.match(answer.errorMessage ?? '', /not linked to your account/);
    await linked(bob);
    answer = await checkoutAnswer(bob.checkout(invoice));
    assert.deepEqual(answer, { ok: false, errorMessage: 'This invoice belongs to another account.' });

    // A double tap on "Pay now" sends one invoice.
    step = alice.send('/deposit 20');
    const second = await server.nextMessage(alice.chatId, step.mark, 'Add $20.00');
    press = alice.press(second, 'Pay now');
    const again = alice.press(second, 'Pay now');
    await server.waitForCall((c) => c.method === 'answerCallbackQuery' && c.payload.callback_query_id === again.queryId, press.mark);
    assert.equal(server.calls.slice(press.mark).filter((c) => c.method === 'sendInvoice').length, 1);

    const ledger = await runtime.admin.checkLedger();
    assert.deepEqual(ledger.differences, []);
    assert.equal(ledger.total, 0);
  });

  it("a request from the menu reaches the admins' chat; an approval there credits and tells the cardholder once", async () => {
    const carol = server.user(3003, { firstName: 'Carol', languageCode: 'ru' });
    const account = await linked(carol);
    let step = carol.send('/menu');
    const menu = await server.nextMessage(carol.chatId, step.mark, 'Главное меню');
    // The menu's message becomes the amounts, then the offer, then the answer: the chat grows by nothing.
    let press = carol.press(menu, 'Пополнить кошелёк');
    const intro = await server.nextEdit(carol.chatId, press.mark, 'Пополнение кошелька');
    press = carol.press(intro, /^\$100$/);
    const offer = await server.nextEdit(carol.chatId, press.mark, 'Пополнить кошелёк на 100,00');
    press = carol.press(offer, 'Попросить администратора');
    const sent = await server.nextEdit(carol.chatId, press.mark, 'отправлена администраторам');
    assert.deepEqual([intro.messageId, offer.messageId, sent.messageId], [menu.messageId, menu.messageId, menu.messageId]);
    const card = await server.nextMessage(ADMIN_CHAT, press.mark, 'Deposit request #');
    assert.match(card.text, /From: Carol/);

    const root = server.user(ADMIN, { firstName: 'Root' }).inGroup(ADMIN_CHAT);
    press = root.press(card, 'Approve');
    const decided = await server.nextEdit(ADMIN_CHAT, press.mark, 'Approved by Root');
    assert.equal(decided.replyMarkup, undefined);
    await server.nextMessage(carol.chatId, press.mark, /одобрена\. Баланс кошелька: 100,00/);
    assert.equal((await runtime.core.walletBalance(account.caller)).balance, 10_000);

    // A rejection from the command line, a process of its own over the same database, reaches her too.
    const request = await runtime.funding.deposits.request({ userId: account.userId, amount: 2_000 });
    const cli = server.calls.length;
    const openOther = () => startCore({ databaseUrl: path.join(dir, 'cards.db'), cardDataKey: TEST_CARD_DATA_KEY, clock: systemClock });
    const code = await runAdmin(['deposits', 'reject', '--id', String(request.id), '--reason', 'Payment not received'], openOther, {
      out: () => undefined,
      err: () => undefined,
    });
    assert.equal(code, 0);
    await server.nextMessage(carol.chatId, cli, /отклонена: Платёж не поступил/);
    const decisions = server.calls
      .slice(press.mark)
      .filter(
        (c) =>
          c.method === 'sendMessage' && Number(c.payload.chat_id) === carol.chatId && /одобрена|отклонена/.test(String(c.payload.text)),
      );
    assert.equal(decisions.length, 2, 'each decision told once');

    step = root.send('/stats');
    const stats = await server.nextMessage(ADMIN_CHAT, step.mark, 'The service on');
    assert.match(stats.text, /Deposit requests waiting: 0/);
    assert.deepEqual(server.unansweredQueries(), []);
  });
});
