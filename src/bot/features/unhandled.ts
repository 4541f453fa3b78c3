import { Composer } from 'grammy';
import { CONVERSATION_BUTTON, parseConversationButton } from '../ui/callback-data.js';
import type { BotContext } from '../context.js';
import { confirmationUsed } from '../store/confirmations.js';
import type { Services } from '../services.js';

/**
 * Last: buttons of finished conversations (a second tap, an old message) and anything unknown. A second
 * tap on a Confirm already used says so, not that the button expired.
 */
export function unhandledFeature(s: Services): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  composer.callbackQuery(CONVERSATION_BUTTON, async (ctx) => {
    const button = parseConversationButton(ctx.callbackQuery.data);
    const chatId = ctx.chat?.id;
    const used = button?.choice === 'ok' && chatId !== undefined && (await confirmationUsed(s.db, button.nonce, chatId));
    await ctx.answerCallbackQuery({ text: ctx.t(used ? 'confirm-used' : 'button-expired') });
  });
  composer.on('callback_query', (ctx) => ctx.answerCallbackQuery({ text: ctx.t('button-expired') }));
  composer.on('message', (ctx) => ctx.reply(ctx.t('unknown-message')));
  return composer;
}
