import { Context } from 'grammy';
import type { BotContext } from '../context.js';
import { dropFlowButtons } from '../conversations/kit.js';
import type { Services } from '../services.js';

/**
 * `/cancel` leaves whatever conversation is active. Installed after the conversations plugin, before the
 * flows. A plain middleware (not a command composer): it sits on the path of every update.
 */
export function cancelFeature(s: Pick<Services, 'db'>) {
  // Built once: `ctx.hasCommand` builds the same check anew on every call.
  const isCancel = Context.has.command('cancel');
  return async (ctx: BotContext, next: () => Promise<void>) => {
    if (!isCancel(ctx)) return next();
    const active = Object.keys(await ctx.conversation.active()).length > 0;
    if (active && ctx.chat) await dropFlowButtons(s, ctx.api, ctx.chat.id);
    await ctx.conversation.exitAll();
    await ctx.reply(ctx.t(active ? 'cancelled' : 'nothing-to-cancel'));
  };
}
