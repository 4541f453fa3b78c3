import { Composer } from 'grammy';
import type { BotContext } from '../context.js';
import { enterFlow } from '../conversations/flows.js';
import { decodeControls } from '../ui/controls-callbacks.js';

/**
 * The fix button of a decline alert: the top-up flow with the shortfall preset, the creation flow with the
 * used card as template, or the card's own change (unfreeze, raise a limit, allow a category); each ends in
 * the usual quote and Confirm, and each reads the card as it is now (an alert may be old).
 */
export function declineFixesFeature(): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  composer.callbackQuery(/^f:/, async (ctx) => {
    const data = decodeControls(ctx.callbackQuery.data);
    if (data?.kind !== 'fix') return ctx.answerCallbackQuery({ text: ctx.t('button-expired') });
    await ctx.answerCallbackQuery();
    const { cardId, fix } = data;
    if (fix.kind === 'topup') return enterFlow.topup(ctx, { cardId, amount: fix.amount });
    if (fix.kind === 'new_card_like') return enterFlow.createCard(ctx, { likeCardId: cardId, type: 'single_use' });
    await enterFlow.declineFix(ctx, { cardId, fix });
  });
  return composer;
}
