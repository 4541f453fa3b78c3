import { Context } from 'grammy';
import { getOrCreate } from '../../infra/get-or-create.js';
import type { BotContext } from '../context.js';
import type { BotDeps } from '../services.js';
import { localeOf } from '../ui/i18n.js';

/**
 * Contexts whose `logger` is a child carrying the update id, made only when something is logged, and whose
 * `t` speaks the user's language. Getters on the class, not properties defined on each context: that made
 * every context slower to use.
 */
export function contextClass(
  logger: BotDeps['logger'],
  translatorFor: (locale: string) => BotContext['t'],
): new (
  ...args: ConstructorParameters<typeof Context>
) => BotContext {
  const children = new WeakMap<Context, BotDeps['logger']>();
  return class extends Context {
    get logger(): BotDeps['logger'] {
      return getOrCreate(children, this, () => logger.child({ updateId: this.update.update_id }));
    }
    /** Texts in the user's language (English unless their Telegram is in Russian). */
    get t(): BotContext['t'] {
      return translatorFor(localeOf(this));
    }
    get translate(): BotContext['t'] {
      return this.t;
    }
  } as unknown as new (
    ...args: ConstructorParameters<typeof Context>
  ) => BotContext;
}
