import type { Api, BotError, Transformer } from 'grammy';
import { isCardServiceError } from '../card-service/from-core.js';
import type { BotContext } from '../context.js';
import { refusalMessage, refusalText, toRefusal } from '../ui/refusal-texts.js';
import { errorSummary, loggableError } from '../../infra/log-safe.js';
import type { Report } from '../../infra/loop.js';
import type { Services } from '../services.js';

/**
 * One place that turns errors into chat text: a refusal in the service's own words plus what to do
 * next; anything else as a short apology, with the details in the log and the admin chat.
 */
export function handleBotError(s: Services) {
  return async (error: BotError<BotContext>) => {
    const { ctx } = error;
    const cause = error.error;
    try {
      if (isCardServiceError(cause)) {
        const refusal = toRefusal(cause);
        await answerIfPending(ctx, s, refusalMessage(ctx.t, refusal));
        await ctx.reply(refusalText(ctx.t, refusal));
        return;
      }
      const err = loggableError(cause);
      (ctx.logger ?? s.logger).error({ err, updateId: ctx.update.update_id }, 'unexpected error in an update');
      await answerIfPending(ctx, s);
      if (ctx.chat) await ctx.reply(ctx.t('unexpected-error'));
      await adminReporter(ctx.api, s)?.(`Bot error in update ${ctx.update.update_id}: ${errorSummary(err)}`);
    } catch (reportError) {
      s.logger.error({ err: loggableError(reportError) }, 'could not report an error to the chat');
    }
  };
}

/** Answers the pressed button, unless something answered it already (Telegram refuses a second answer). */
async function answerIfPending(ctx: BotContext, s: Services, text?: string): Promise<void> {
  if (ctx.callbackQuery && !s.answered.has(ctx.callbackQuery.id))
    await ctx.answerCallbackQuery(text === undefined ? undefined : { text }).catch(() => undefined);
}

/** Sends operator reports to `ADMIN_CHAT_ID`, when set; a failure to report is logged, never thrown. */
export function adminReporter(api: Api, s: Pick<Services, 'config' | 'logger'>): Report | undefined {
  const chatId = s.config.adminChatId;
  if (chatId === undefined) return undefined;
  return async (text) => {
    await api
      .sendMessage(chatId, text.slice(0, 4000))
      .catch((error: unknown) => s.logger.warn({ err: loggableError(error) }, 'could not report to the admin chat'));
  };
}

const REMEMBERED_ANSWERS = 1_000;

/**
 * The callback queries answered lately, recorded by a transformer on the bot's Api (so answers from
 * menus, conversations and handlers all count). An answer only stops the button's spinner: one that
 * Telegram refuses (a press too old to answer, after a restart or a long queue) is logged and taken as
 * given, so the update it belongs to goes on instead of ending in an apology.
 */
export class AnsweredCallbacks {
  readonly #ids = new Set<string>();
  constructor(private readonly logger: Services['logger']) {}
  readonly transformer: Transformer = (prev, method, payload, signal) => {
    if (method !== 'answerCallbackQuery') return prev(method, payload, signal);
    const id = (payload as { callback_query_id: string }).callback_query_id;
    if (this.#ids.size >= REMEMBERED_ANSWERS) this.#ids.delete(this.#ids.values().next().value as string);
    this.#ids.add(id);
    return prev(method, payload, signal).then((response) => {
      if (response.ok) return response;
      this.logger.warn({ errorCode: response.error_code, description: response.description }, 'Telegram refused to answer a button press');
      return { ok: true, result: true } as unknown as typeof response;
    });
  };
  has(callbackQueryId: string): boolean {
    return this.#ids.has(callbackQueryId);
  }
}
