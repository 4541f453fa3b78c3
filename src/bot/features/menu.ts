import { Menu } from '@grammyjs/menu';
import { Composer } from 'grammy';
import type { BotContext } from '../context.js';
import { cardListScreen, enterFlow, show, transactionsScreen, walletScreen } from '../screens.js';
import type { Services } from '../services.js';

export type MainMenu = Menu<BotContext>;

export const mainMenuText = (ctx: BotContext) => ctx.t('menu-title');

/**
 * The main menu. Its buttons only read and then answer with a new message, so the menu stays put
 * under its own message; "New card" enters the create conversation (registered before this menu).
 */
/**
 * The main menu's layout, as its fingerprint: a press on a menu drawn with another layout is answered as
 * outdated. Bump it when buttons move. (Cheaper than the plugin's default check, which draws the pressed
 * button's label and hashes it on every press.)
 */
const MAIN_MENU_LAYOUT = 'main:1';

export function createMainMenu(s: Services): MainMenu {
  return new Menu<BotContext>('main', {
    fingerprint: () => MAIN_MENU_LAYOUT,
    // An outdated menu is answered in the user's language and drawn again as it is now.
    onMenuOutdated: async (ctx) => {
      await ctx.answerCallbackQuery({ text: ctx.t('button-expired') });
      await ctx.menu.update();
    },
  })
    .text((ctx) => ctx.t('menu-wallet'), async (ctx) => show(ctx, await walletScreen(ctx, s), 'reply'))
    .text((ctx) => ctx.t('menu-cards'), async (ctx) => show(ctx, await cardListScreen(ctx, s), 'reply'))
    .row()
    .text((ctx) => ctx.t('menu-new-card'), (ctx) => enterFlow(ctx, 'createCard'))
    .text((ctx) => ctx.t('menu-transactions'), async (ctx) => show(ctx, await transactionsScreen(ctx, s, 1), 'reply'))
    .row()
    .text((ctx) => ctx.t('menu-otps'), async (ctx) => show(ctx, await cardListScreen(ctx, s, 'otps'), 'reply'))
    .text((ctx) => ctx.t('menu-help'), (ctx) => ctx.reply(ctx.t('help', { ttl: s.config.sensitiveTtlSeconds })));
}

export function menuFeature(s: Services, mainMenu: MainMenu): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  composer.command('menu', (ctx) => ctx.reply(mainMenuText(ctx), { reply_markup: mainMenu }));
  composer.command('help', (ctx) => ctx.reply(ctx.t('help', { ttl: s.config.sensitiveTtlSeconds })));
  composer.command('cards', async (ctx) => show(ctx, await cardListScreen(ctx, s), 'reply'));
  return composer;
}
