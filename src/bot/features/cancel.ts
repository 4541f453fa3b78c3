import { Composer } from 'grammy';
import type { BotContext } from '../context.js';

/** `/cancel` leaves whatever conversation is active. Installed after the conversations plugin, before the flows. */
export function cancelFeature(): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  composer.command('cancel', async (ctx) => {
    const active = Object.keys(await ctx.conversation.active()).length > 0;
    await ctx.conversation.exitAll();
    await ctx.reply(ctx.t(active ? 'cancelled' : 'nothing-to-cancel'));
  });
  return composer;
}
