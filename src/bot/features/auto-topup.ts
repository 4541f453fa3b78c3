import { Composer } from 'grammy';
import type { BotContext } from '../context.js';
import { autoTopupOf } from '../ui/controls-access.js';
import { decodeControls, type ControlsCallback } from '../ui/controls-callbacks.js';
import { autoTopupPresetsScreen, autoTopupScreen, withDefaults } from '../ui/auto-topup-screens.js';
import { accountOf, show } from '../ui/screens.js';
import type { Services } from '../services.js';
import { openCardControls } from './limits.js';

/**
 * "Auto top-up" on a card's view (embedded mode): on or off, the balance it keeps and the amount it adds,
 * each set at once through the core, the screen drawn again from the card as the core then reads it.
 */
export function autoTopupFeature(s: Services): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  composer.callbackQuery(/^a:/, async (ctx) => {
    const data = decodeControls(ctx.callbackQuery.data);
    const notice = data ? await handle(ctx, s, data) : ctx.t('button-expired');
    await ctx.answerCallbackQuery(notice ? { text: notice } : undefined);
  });
  return composer;
}

async function handle(ctx: BotContext, s: Services, data: ControlsCallback): Promise<string | undefined> {
  const opened = await openCardControls(ctx, s, data.cardId);
  if ('notice' in opened) return opened.notice;
  const { card, controls } = opened;
  const { topupMin, topupMax } = s.cards.rules;
  const settings = withDefaults(autoTopupOf(card), topupMin);
  const redraw = async () => {
    const read = await accountOf(ctx).getCard(card.id);
    await show(ctx, autoTopupScreen(ctx.t, read, withDefaults(autoTopupOf(read), topupMin)));
  };
  switch (data.kind) {
    case 'auto-topup':
      await show(ctx, autoTopupScreen(ctx.t, card, settings));
      return;
    case 'auto-topup-switch':
      await controls.setAutoTopup(card.id, { ...settings, enabled: data.enabled });
      await redraw();
      return ctx.t('auto-topup-saved');
    case 'auto-topup-presets': {
      // Neither over the card's plan limit; the amount added is a top-up, within the service's range.
      const most = Math.min(topupMax, card.limit ?? topupMax);
      const offered = (amount: number) => amount <= most && (data.field === 'minBalance' || amount >= topupMin);
      await show(ctx, autoTopupPresetsScreen(ctx.t, card, data.field, settings[data.field], offered));
      return;
    }
    case 'auto-topup-set':
      await controls.setAutoTopup(card.id, { ...settings, [data.field]: data.to });
      await redraw();
      return ctx.t('auto-topup-saved');
    default:
      return ctx.t('button-expired');
  }
}
