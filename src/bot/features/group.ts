import { Composer } from 'grammy';
import type { BotContext } from '../context.js';

/** Anything about cards happens in private chats only; a group gets one line and nothing else. */
export function groupFeature(): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  const group = composer.filter((ctx) => ctx.chat !== undefined && ctx.chat.type !== 'private');
  group.on('callback_query', (ctx) => ctx.answerCallbackQuery({ text: ctx.t('group-refusal') }));
  group.on('message::bot_command', (ctx) => ctx.reply(ctx.t('group-refusal')));
  return composer;
}
