import { Composer } from 'grammy';
import type { BotContext } from '../context.js';
import { loggableError } from '../../infra/log-safe.js';
import { findApiTokens } from '../token-scan.js';
import { deleteTokenMessage, replyNotDeleted } from './link.js';

/**
 * A message holding one of our API tokens (typed, in a caption, inside other text, edited in, in any
 * chat): deleted first, whatever happens next. In a private chat a token the user sent links the chat;
 * a forwarded one, several at once, or any in a group or channel link nothing, and the bot says what to
 * do. Routed here before anything else sees the update (src/bot/index.ts), so no flow takes it as an answer.
 */
export function pastedTokenFeature(link: (ctx: BotContext, token: string) => Promise<void>): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  composer.use(async (ctx) => {
    const message = ctx.msg!;
    const tokens = findApiTokens(message.text ?? message.caption ?? '');
    const deleted = await deleteTokenMessage(ctx);
    const say = (key: string) => (deleted ? ctx.reply(ctx.t(key)) : replyNotDeleted(ctx, `${ctx.t('token-not-deleted')}\n\n${ctx.t(key)}`));
    if (ctx.chat!.type !== 'private') {
      // The bot may not be allowed to write here either; that is logged, never retried.
      await say('token-in-group').catch((error: unknown) =>
        ctx.logger.warn({ chatId: ctx.chat!.id, err: loggableError(error) }, 'could not warn a chat about an API token'),
      );
      return;
    }
    if (message.forward_origin) return void (await say('token-forwarded'));
    if (tokens.length > 1) return void (await say('token-several'));
    if (!deleted) await replyNotDeleted(ctx);
    await link(ctx, tokens[0]!);
  });
  return composer;
}
