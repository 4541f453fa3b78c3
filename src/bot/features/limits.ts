import { Composer } from 'grammy';
import type { BotContext } from '../context.js';
import type { Card } from '../card-service/port.js';
import { controlsOf, type ControlsAccount } from '../ui/controls-access.js';
import { decodeControls, type ControlsCallback } from '../ui/controls-callbacks.js';
import { categoryName, limitInput, limitName, limitOf, limitPresetsScreen, limitsScreen } from '../ui/limits-screens.js';
import { localMoney } from '../ui/format.js';
import { accountOf, cardScreen, show } from '../ui/screens.js';
import type { Services } from '../services.js';

/**
 * "Limits" on a card's view (embedded mode): the screen of its limits and categories, a limit's presets, a
 * preset or Off set at once, a category toggled. The core sets and checks them; the bot draws them again
 * from what the core then reads.
 */
export function limitsFeature(s: Services): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  composer.callbackQuery(/^k:/, async (ctx) => {
    const data = decodeControls(ctx.callbackQuery.data);
    const notice = data ? await handle(ctx, s, data) : ctx.t('button-expired');
    await ctx.answerCallbackQuery(notice ? { text: notice } : undefined);
  });
  return composer;
}

/**
 * The card and its controls for a controls button, or the notice to answer instead: a service without
 * controls (remote mode), a card no longer open (its view is drawn again as it is).
 */
export async function openCardControls(
  ctx: BotContext,
  s: Services,
  cardId: string,
): Promise<{ card: Card; controls: ControlsAccount } | { notice: string }> {
  const account = accountOf(ctx);
  const controls = controlsOf(account);
  if (controls === undefined) return { notice: ctx.t('controls-unavailable') };
  const card = await account.getCard(cardId);
  if (card.status !== 'active' && card.status !== 'frozen') {
    await show(ctx, await cardScreen(ctx, s, cardId, card));
    return { notice: ctx.t('card-stale', { status: card.status }) };
  }
  return { card, controls };
}

async function handle(ctx: BotContext, s: Services, data: ControlsCallback): Promise<string | undefined> {
  const opened = await openCardControls(ctx, s, data.cardId);
  if ('notice' in opened) return opened.notice;
  const { card, controls } = opened;
  switch (data.kind) {
    case 'limits':
      await show(ctx, limitsScreen(ctx.t, card, await controls.getControls(card.id)));
      return;
    case 'limit-presets': {
      const current = limitOf(await controls.getControls(card.id), data.control);
      await show(ctx, limitPresetsScreen(ctx.t, card, data.control, current));
      return;
    }
    case 'limit-set': {
      await controls.setControls(card.id, limitInput(data.control, data.to));
      await show(ctx, limitsScreen(ctx.t, card, await controls.getControls(card.id)));
      const value = data.to === null ? ctx.t('limit-none') : localMoney(data.to);
      return ctx.t('limit-set', { name: limitName(ctx.t, data.control), value });
    }
    case 'category': {
      const { blockedCategories } = await controls.getControls(card.id);
      const blocking = !blockedCategories.includes(data.category);
      const next = blocking ? [...blockedCategories, data.category] : blockedCategories.filter((c) => c !== data.category);
      await controls.setControls(card.id, { blockedCategories: next });
      await show(ctx, limitsScreen(ctx.t, card, await controls.getControls(card.id)));
      return ctx.t(blocking ? 'category-blocked' : 'category-allowed', { name: categoryName(ctx.t, data.category) });
    }
    default:
      return ctx.t('button-expired');
  }
}
