import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CoreRuntime } from '../../src/app/compose.js';
import type { BotApiServer, StoredMessage } from '../helpers/bot-api-server.js';
import { type E2eBot, startE2eBot } from '../helpers/e2e-bot.js';
import { newCard, newCustomer } from '../helpers/core.js';

const buttons = (m: StoredMessage) => m.replyMarkup?.inline_keyboard.flat().map((b) => b.text) ?? [];

/** "Auto top-up" on the card's view and its pushes (issue 33, section 3), over real Bot API traffic. */
describe('a card’s auto top-up from its view, and what the chat is told when it runs', () => {
  let e2e: E2eBot | undefined;
  let server: BotApiServer;
  let runtime: CoreRuntime;

  before(async () => {
    ({ server, runtime } = e2e = await startE2eBot('bot-auto-topup'));
  });

  after(() => e2e?.stop());

  async function linked(chatId: number, { deposit = 100_000, languageCode = 'en' } = {}) {
    const customer = await newCustomer(runtime, deposit);
    const card = await newCard(runtime, customer, 'Ads');
    const user = server.user(chatId, { languageCode });
    await server.nextMessage(chatId, user.send(customer.token).mark);
    return { customer, card, user };
  }

  it('on in 2 taps from the card view, the amount in 3, read back from the core', async () => {
    const { customer, card, user } = await linked(5301);
    const list = await server.nextMessage(5301, user.send('/cards').mark);
    const view = await server.nextEdit(5301, user.press(list, 'Ads').mark, 'Balance');
    const screen = await server.nextEdit(5301, user.press(view, 'Auto top-up').mark, 'Auto top-up of “Ads” (');
    assert.match(screen.text, /: off\n/);
    const on = await server.nextEdit(5301, user.press(screen, 'Turn on').mark, /: on\n/);
    let read = (await runtime.core.getCard(customer.caller, card.id)).autoTopup;
    assert.deepEqual({ ...read, lastTriggered: null }, { enabled: true, minBalance: 1_000, topupAmount: 5_000, lastTriggered: null });

    const presets = await server.nextEdit(5301, user.press(on, 'Add $50.00').mark, 'Add how much');
    assert.deepEqual(buttons(presets), ['$25.00', '• $50.00 •', '$100.00', '$250.00', '⬅️ Back']);
    const set = await server.nextEdit(5301, user.press(presets, '$100.00').mark, '$100.00 is moved');
    assert.ok(buttons(set).includes('Add $100.00'));
    read = (await runtime.core.getCard(customer.caller, card.id)).autoTopup;
    assert.equal(read.topupAmount, 10_000);
    assert.equal(read.enabled, true);

    const off = await server.nextEdit(5301, user.press(set, 'Turn off').mark, /: off\n/);
    assert.ok(buttons(off).includes('▶️ Turn on'));
    assert.equal((await runtime.core.getCard(customer.caller, card.id)).autoTopup.enabled, false);
  });

  it('a purchase short of money runs it: the chat is told what was added and the balance', async () => {
    const { customer, card } = await linked(5302);
    await runtime.core.setAutoTopup(customer.caller, card.id, { enabled: true, minBalance: 1_000, topupAmount: 5_000 });
    const mark = server.mark();
    const purchase = await runtime.admin.simulatePurchase(card.id, 2_000, 'Bakery');
    assert.equal(purchase.status, 'Approved');
    const pushed = await server.nextMessage(5302, mark, 'Auto top-up');
    assert.match(pushed.text, /^🔁 Auto top-up: \$50\.00 added to “Ads” \(.+\), balance \$\d+\.\d\d\.$/);
  });

  it('a wallet too short to run it: the chat is told why and how to add money, beside the decline; in Russian too', async () => {
    const { customer, card, user } = await linked(5303, { deposit: 3_000 });
    await runtime.core.setAutoTopup(customer.caller, card.id, { enabled: true, minBalance: 1_000, topupAmount: 5_000 });
    let mark = server.mark();
    await runtime.admin.simulatePurchase(card.id, 2_000, 'Bakery');
    const failed = await server.nextMessage(5303, mark, 'could not run');
    assert.match(failed.text, /your wallet has \$\d+\.\d\d, not enough .* \/deposit/);
    assert.deepEqual(buttons(failed), ['💵 Add money']);
    await server.nextMessage(5303, mark, 'Declined');
    // The fix: the "Add money" screen, as the main menu's, in a message of its own (the push kept).
    const addMoney = await server.nextMessage(5303, user.press(failed, 'Add money').mark, 'Add money to your wallet');
    assert.ok(buttons(addMoney).includes('$50'), buttons(addMoney).join(', '));

    const russian = await linked(5304, { deposit: 3_000, languageCode: 'ru' });
    await runtime.core.setAutoTopup(russian.customer.caller, russian.card.id, { enabled: true, minBalance: 1_000, topupAmount: 5_000 });
    mark = server.mark();
    await runtime.admin.simulatePurchase(russian.card.id, 2_000, 'Bakery');
    const inRussian = await server.nextMessage(5304, mark, 'Автопополнение');
    assert.match(inRussian.text, /не выполнено: в кошельке .* \/deposit/);
    assert.deepEqual(buttons(inRussian), ['💵 Пополнить кошелёк']);
    const screen = await server.nextMessage(5304, russian.user.press(inRussian, 'Пополнить кошелёк').mark, 'Пополнение кошелька');
    assert.ok(buttons(screen).includes('$50'), buttons(screen).join(', '));
  });

  it('a card at its plan’s limit: the chat is told why, with the card one tap away to withdraw; in Russian too', async () => {
    for (const [chatId, languageCode, said, open] of [
      [5305, 'en', "at its plan's limit", '💳 Open the card'],
      [5306, 'ru', 'достигла лимита своего тарифа', '💳 Открыть карту'],
    ] as const) {
      const { customer, card, user } = await linked(chatId, { deposit: 200_000, languageCode });
      const { limit } = (await runtime.core.listPlans()).find((p) => p.id === card.planId)!;
      await runtime.core.topup(customer.caller, card.id, { amount: limit - 1_000 });
      await runtime.core.setAutoTopup(customer.caller, card.id, { enabled: true, minBalance: 1_000, topupAmount: 5_000 });
      const mark = server.mark();
      await runtime.admin.simulatePurchase(card.id, limit, 'Bakery');
      const failed = await server.nextMessage(chatId, mark, said);
      assert.deepEqual(buttons(failed), [open]);
      const view = await server.nextMessage(chatId, user.press(failed, open).mark, '💳 Ads');
      assert.ok(buttons(view).length > 1, buttons(view).join(', '));
    }
  });
});
