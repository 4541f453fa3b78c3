import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CoreRuntime } from '../../src/app/compose.js';
import { type E2eBot, startE2eBot } from '../helpers/e2e-bot.js';
import type { BotApiServer, StoredMessage } from '../helpers/bot-api-server.js';
import { newCard, newCustomer } from '../helpers/core.js';

/**
 * The taps each everyday operation takes from the main menu, counted from the presses this test makes
 * (no typing): the figures of the README's "Taps per everyday operation" table. Screens are drawn in the
 * menu's own message, so each operation starts from a menu of its own (`/menu`, not a tap).
 */
describe('taps per everyday operation, from the main menu', () => {
  let e2e: E2eBot | undefined;
  let server: BotApiServer;
  let runtime: CoreRuntime;

  before(async () => {
    ({ server, runtime } = e2e = await startE2eBot('bot-taps'));
  });

  after(() => e2e?.stop());

  for (const [cardCount, chatId] of [
    [1, 4101],
    [2, 4102],
  ] as const) {
    it(`with ${cardCount} card(s): top-up with a preset ${2 + cardCount}, freeze 3, details 3, OTPs 2`, async () => {
      const customer = await newCustomer(runtime);
      await newCard(runtime, customer, 'Ads');
      if (cardCount === 2) await newCard(runtime, customer, 'Travel');
      const user = server.user(chatId);
      const linked = user.send(customer.token);
      await server.nextMessage(chatId, linked.mark, 'Linked');
      const newMenu = () => server.nextMessage(chatId, user.send('/menu').mark, 'Main menu');

      let taps = 0;
      const tap = (message: StoredMessage, label: string | RegExp) => {
        taps++;
        return user.press(message, label).mark;
      };
      /** My cards, then the card ("Ads"): the card's view, drawn in place of the list. */
      const openCard = async () => {
        const list = await server.nextEdit(chatId, tap(await newMenu(), 'My cards'), 'Your cards');
        return server.nextEdit(chatId, tap(list, /Ads/), 'Balance');
      };
      const counted = async (operation: () => Promise<unknown>) => {
        taps = 0;
        await operation();
        return taps;
      };

      const topup = await counted(async () => {
        // The main menu's Top up: straight to the amount with one card, the card picked first with several.
        const menu = await newMenu();
        let mark = tap(menu, 'Top up a card');
        if (cardCount > 1) {
          const list = await server.nextEdit(chatId, mark, 'Pick a card');
          mark = tap(list, /Ads/);
        }
        const ask = await server.nextMessage(chatId, mark, 'How much to top up');
        const quote = await server.nextMessage(chatId, tap(ask, '$25.00'), 'Platform fee');
        await server.nextEdit(chatId, tap(quote, 'Confirm'), 'Topped up $25.00');
      });
      const otps = await counted(async () => {
        const list = await server.nextEdit(chatId, tap(await newMenu(), 'OTPs'), 'Pick a card');
        await server.nextEdit(chatId, tap(list, /Ads/), 'No OTPs');
      });
      const details = await counted(async () => {
        const view = await openCard();
        await server.nextMessage(chatId, tap(view, 'Details'), 'Card details');
      });
      const freeze = await counted(async () => {
        const view = await openCard();
        await server.nextEdit(chatId, tap(view, 'Freeze'), 'frozen');
      });
      assert.deepEqual({ topup, freeze, details, otps }, { topup: 2 + cardCount, freeze: 3, details: 3, otps: 2 });
    });
  }
});
