import type { Bot } from 'grammy';
import type { BotContext } from '../context.js';
import type { BotDeps } from '../services.js';
import type { CardsBot } from './cards-bot.js';

/** A started bot (polling or webhook). */
export interface RunningBot {
  bot: Bot<BotContext>;
  /** Stops fetching, finishes the updates in flight and the background jobs. */
  stop(): Promise<void>;
}

/**
 * `bot.init()` (getMe), with a warning when Telegram has not answered after a while: auto-retry waits out an
 * unreachable Telegram without a word, and the start would otherwise just hang.
 */
export async function initBot(bot: CardsBot, deps: Pick<BotDeps, 'config' | 'logger'>): Promise<void> {
  const notice = setTimeout(
    () =>
      deps.logger.warn(
        { apiHost: new URL(deps.config.apiRoot).host },
        'Telegram has not answered yet; still trying (check TELEGRAM_API_ROOT and the network)',
      ),
    deps.config.slowStartNoticeMs ?? 10_000,
  );
  try {
    await bot.init();
  } finally {
    clearTimeout(notice);
  }
}
