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
export function createMainMenu(s: Services): MainMenu {
  return new Menu<BotContext>('main')
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
