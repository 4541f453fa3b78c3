import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CoreRuntime } from '../../src/app/compose.js';
import type { BotApiServer, ScriptedUser, StoredMessage } from '../helpers/bot-api-server.js';
import { type E2eBot, startE2eBot } from '../helpers/e2e-bot.js';
import { newCard, newCustomer } from '../helpers/core.js';

const buttons = (m: StoredMessage) => m.replyMarkup?.inline_keyboard.flat().map((b) => b.text) ?? [];

/** "Limits" on the card's view (issue 33, section 2): presets and Off, categories as toggles, set through the core. */
describe('a card’s limits from its view, over real Bot API traffic', () => {
  let e2e: E2eBot | undefined;
  let server: BotApiServer;
  let runtime: CoreRuntime;

  before(async () => {
    ({ server, runtime } = e2e = await startE2eBot('bot-limits'));
  });

  after(() => e2e?.stop());

  /** A linked chat with one card, "Ads", and its view open (drawn in the card list's message). */
  async function cardView(chatId: number, languageCode = 'en') {
    const customer = await newCustomer(runtime);
    const card = await newCard(runtime, customer, 'Ads');
    const user = server.user(chatId, { languageCode });
    await server.nextMessage(chatId, user.send(customer.token).mark);
    const list = await server.nextMessage(chatId, user.send('/cards').mark);
    const view = await server.nextEdit(chatId, user.press(list, 'Ads').mark);
    return { customer, card, user, view };
  }

  /** Presses `label` under `message` and waits for that message's redraw; counts the tap. */
  function tapper(user: ScriptedUser, chatId: number) {
    let taps = 0;
    return {
      tap: (message: StoredMessage, label: string | RegExp, text?: string | RegExp) => {
        taps++;
        return server.nextEdit(chatId, user.press(message, label).mark, text);
      },
      get taps() {
        return taps;
      },
    };
  }

  it('a daily limit set by a preset in 3 taps from the card view, read back from the core; Off removes it', async () => {
    const { customer, card, user, view } = await cardView(5101);
    const taps = tapper(user, 5101);
    const limits = await taps.tap(view, 'Limits', 'Limits of “Ads”');
    assert.match(limits.text, /Daily: no limit \(spent today \$0\.00\)/);
    const presets = await taps.tap(limits, /^Daily/, 'Daily limit of “Ads”');
    assert.deepEqual(buttons(presets), ['$50.00', '$100.00', '$250.00', '$500.00', '$1,000.00', '• Off •', '⬅️ Back']);
    const set = await taps.tap(presets, '$100.00', 'Daily: $100.00');
    assert.equal(taps.taps, 3);
    assert.equal((await runtime.core.getControls(customer.caller, card.id)).dailyLimit, 10_000);
    assert.ok(buttons(set).includes('Daily: $100.00'));

    const again = await taps.tap(set, /^Daily/, 'now $100.00');
    assert.ok(buttons(again).includes('• $100.00 •'));
    await taps.tap(again, 'Off', 'Daily: no limit');
    assert.equal((await runtime.core.getControls(customer.caller, card.id)).dailyLimit, null);
  });

  it('a category blocked and allowed again with one tap each on the limits screen', async () => {
    const { customer, card, user, view } = await cardView(5102);
    const limits = await server.nextEdit(5102, user.press(view, 'Limits').mark, 'Limits of');
    assert.ok(buttons(limits).includes('✅ Gambling'));
    const blocked = await server.nextEdit(5102, user.press(limits, '✅ Gambling').mark, 'Blocked: Gambling');
    assert.ok(buttons(blocked).includes('🚫 Gambling'));
    assert.deepEqual((await runtime.core.getControls(customer.caller, card.id)).blockedCategories, ['gambling']);
    await server.nextEdit(5102, user.press(blocked, '🚫 Gambling').mark, 'Blocked: nothing');
    assert.deepEqual((await runtime.core.getControls(customer.caller, card.id)).blockedCategories, []);
  });

  it('in Russian: the limits screen, its presets and categories', async () => {
    const { customer, card, user, view } = await cardView(5103, 'ru');
    const limits = await server.nextEdit(5103, user.press(view, 'Лимиты').mark, 'Лимиты карты «Ads»');
    assert.match(limits.text, /В день: без лимита/);
    assert.ok(buttons(limits).includes('✅ Азартные игры'));
    const presets = await server.nextEdit(5103, user.press(limits, /^На покупку/).mark, 'Выберите новый');
    await server.nextEdit(5103, user.press(presets, /^50,00/).mark, /На покупку: 50,00/);
    assert.equal((await runtime.core.getControls(customer.caller, card.id)).perPurchaseLimit, 5_000);
  });

  it('a limits button of a card closed since redraws the card and changes nothing', async () => {
    const { customer, card, user, view } = await cardView(5104);
    const limits = await server.nextEdit(5104, user.press(view, 'Limits').mark, 'Limits of');
    await runtime.core.close(customer.caller, card.id);
    const press = user.press(limits, '✅ Travel');
    await server.nextEdit(5104, press.mark, 'Status: closed');
    assert.deepEqual((await runtime.core.getCard(customer.caller, card.id)).controls.blockedCategories, []);
  });
});
