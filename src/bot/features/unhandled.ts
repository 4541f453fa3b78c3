import { Composer } from 'grammy';
import { CONVERSATION_BUTTON } from '../callback-data.js';
import type { BotContext } from '../context.js';

/** Last: buttons of finished conversations (a second tap, an old message) and anything unknown. */
export function unhandledFeature(): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  composer.callbackQuery(CONVERSATION_BUTTON, (ctx) => ctx.answerCallbackQuery({ text: ctx.t('button-expired') }));
  composer.on('callback_query', (ctx) => ctx.answerCallbackQuery({ text: ctx.t('button-expired') }));
  composer.on('message', (ctx) => ctx.reply(ctx.t('unknown-message')));
  return composer;
}
