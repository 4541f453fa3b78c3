import { Composer } from 'grammy';
import type { BotContext } from '../context.js';
import { enterFlow } from '../conversations/flows.js';
import { cardShortcut } from './cards.js';
import { showAddMoney } from './deposits.js';
import { FixedMenu, type FixedButton } from '../ui/fixed-menu.js';
import { MAIN_MENU_BUTTON } from '../ui/callback-data.js';
import { withMenuButton } from '../ui/keyboards.js';
import { cardListScreen, type Screen, show, transactionsScreen, walletScreen } from '../ui/screens.js';
import type { Services } from '../services.js';

export type MainMenu = FixedMenu<BotContext>;

export const mainMenuText = (ctx: BotContext) => ctx.t('menu-title');

/** The main menu as a screen, for the "Menu" button that draws it again in place of the screen it led to. */
async function mainMenuScreen(ctx: BotContext, mainMenu: MainMenu): Promise<Screen> {
  return { text: mainMenuText(ctx), keyboard: await mainMenu.markup(ctx) };
}

/**
 * The commands and buttons as they are here: money in only where the service has it, `/addcard` in front of
 * a service that lists no cards (remote mode), details in the Mini App when `WEBAPP_URL` is set.
 */
function helpScreen(ctx: BotContext, s: Services): Screen {
  return {
    text: ctx.t('help', {
      ttl: s.config.sensitiveTtlSeconds,
      funding: s.cards.funding === undefined ? 'no' : 'yes',
      addcard: s.cards.mode === 'remote' ? 'yes' : 'no',
      details: s.config.webAppUrl === undefined ? 'message' : 'webapp',
    }),
    keyboard: withMenuButton(ctx.t),
  };
}

/**
 * The main menu's layout, as its fingerprint: a press on a menu drawn with another layout is answered as
 * outdated. Bump it when buttons move. (Cheaper than the plugin's default check, which draws the pressed
 * button's label and hashes it on every press.) Without money in (remote mode) "Add money" is left out.
 */
const MAIN_MENU_LAYOUT = 'main:3';
const MAIN_MENU_LAYOUT_UNFUNDED = 'main:3:unfunded';

/**
 * The main menu. Its screens (wallet, cards, transactions, OTPs, help, the card to top up) are drawn in
 * the menu's own message, each with a "Menu" button back; "New card" enters the create conversation
 * (registered before this menu), which asks in messages of its own.
 */
export function createMainMenu(s: Services): MainMenu {
  // Each button answers its press itself, beside its handler as the plugin does (whose own answer builds
  // a composer and a fork on every press).
  const button = (label: string, handler: (ctx: BotContext) => unknown): FixedButton<BotContext> => ({
    label: (ctx) => ctx.t(label),
    press: (ctx) => Promise.all([ctx.answerCallbackQuery(), handler(ctx)]),
  });
  // Money in from chat credits our own wallet: a service without it (remote mode) is not offered it (/deposit says why).
  const funded = s.cards.funding !== undefined;
  const layout = funded ? MAIN_MENU_LAYOUT : MAIN_MENU_LAYOUT_UNFUNDED;
  const topup = button('menu-topup', (ctx) => cardShortcut(ctx, s, 'topup'));
  return new FixedMenu<BotContext>(
    'main',
    {
      autoAnswer: false,
      fingerprint: () => layout,
      // An outdated menu is answered in the user's language and drawn again as it is now.
      onMenuOutdated: async (ctx) => {
        await ctx.answerCallbackQuery({ text: ctx.t('button-expired') });
        await ctx.menu.update();
      },
    },
    [
      [
        button('menu-wallet', async (ctx) => show(ctx, await walletScreen(ctx))),
        button('menu-cards', async (ctx) => show(ctx, await cardListScreen(ctx, s))),
      ],
      funded ? [topup, button('menu-add-money', (ctx) => showAddMoney(ctx, s))] : [topup],
      [
        button('menu-new-card', (ctx) => enterFlow.createCard(ctx)),
        button('menu-transactions', async (ctx) => show(ctx, await transactionsScreen(ctx, 1))),
      ],
      [
        button('menu-otps', async (ctx) => show(ctx, await cardListScreen(ctx, s, 'otps'))),
        button('menu-help', (ctx) => show(ctx, helpScreen(ctx, s))),
      ],
    ],
  );
}

export function menuFeature(s: Services, mainMenu: MainMenu): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  composer.command('menu', (ctx) => ctx.reply(mainMenuText(ctx), { reply_markup: mainMenu }));
  composer.command('help', (ctx) => show(ctx, helpScreen(ctx, s)));
  composer.command('cards', async (ctx) => show(ctx, await cardListScreen(ctx, s)));
  composer.callbackQuery(MAIN_MENU_BUTTON, async (ctx) => {
    await Promise.all([ctx.answerCallbackQuery(), show(ctx, await mainMenuScreen(ctx, mainMenu))]);
  });
  return composer;
}
