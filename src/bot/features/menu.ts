import { Composer } from 'grammy';
import type { BotContext } from '../context.js';
import { enterFlow } from '../conversations/flows.js';
import { cardShortcut } from './cards.js';
import { showAddMoney } from './deposits.js';
import { FixedMenu, type FixedButton } from '../fixed-menu.js';
import { cardListScreen, show, transactionsScreen, walletScreen } from '../screens.js';
import type { Services } from '../services.js';

export type MainMenu = FixedMenu<BotContext>;

export const mainMenuText = (ctx: BotContext) => ctx.t('menu-title');

/**
 * The main menu's layout, as its fingerprint: a press on a menu drawn with another layout is answered as
 * outdated. Bump it when buttons move. (Cheaper than the plugin's default check, which draws the pressed
 * button's label and hashes it on every press.)
 */
const MAIN_MENU_LAYOUT = 'main:3';

/**
 * The main menu. Its buttons only read and then answer with a new message, so the menu stays put
 * under its own message; "New card" enters the create conversation (registered before this menu).
 */
export function createMainMenu(s: Services): MainMenu {
  // Each button answers its press itself, beside its handler as the plugin does (whose own answer builds
  // a composer and a fork on every press).
  const button = (label: string, handler: (ctx: BotContext) => unknown): FixedButton<BotContext> => ({
    label: (ctx) => ctx.t(label),
    press: (ctx) => Promise.all([ctx.answerCallbackQuery(), handler(ctx)]),
  });
  return new FixedMenu<BotContext>(
    'main',
    {
      autoAnswer: false,
      fingerprint: () => MAIN_MENU_LAYOUT,
      // An outdated menu is answered in the user's language and drawn again as it is now.
      onMenuOutdated: async (ctx) => {
        await ctx.answerCallbackQuery({ text: ctx.t('button-expired') });
        await ctx.menu.update();
      },
    },
    [
      [
        button('menu-wallet', async (ctx) => show(ctx, await walletScreen(ctx, s), 'reply')),
        button('menu-cards', async (ctx) => show(ctx, await cardListScreen(ctx, s), 'reply')),
      ],
      [button('menu-topup', (ctx) => cardShortcut(ctx, s, 'topup')), button('menu-add-money', (ctx) => showAddMoney(ctx, s))],
      [
        button('menu-new-card', (ctx) => enterFlow.createCard(ctx)),
        button('menu-transactions', async (ctx) => show(ctx, await transactionsScreen(ctx, s, 1), 'reply')),
      ],
      [
        button('menu-otps', async (ctx) => show(ctx, await cardListScreen(ctx, s, 'otps'), 'reply')),
        button('menu-help', (ctx) => ctx.reply(ctx.t('help', { ttl: s.config.sensitiveTtlSeconds }))),
      ],
    ],
  );
}

export function menuFeature(s: Services, mainMenu: MainMenu): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  composer.command('menu', (ctx) => ctx.reply(mainMenuText(ctx), { reply_markup: mainMenu }));
  composer.command('help', (ctx) => ctx.reply(ctx.t('help', { ttl: s.config.sensitiveTtlSeconds })));
  composer.command('cards', async (ctx) => show(ctx, await cardListScreen(ctx, s), 'reply'));
  return composer;
}
