import { limit } from '@grammyjs/ratelimiter';
import type { Middleware } from 'grammy';
import { ratelimiterStorage, WindowCounts } from '../../infra/window-counts.js';
import type { BotContext } from '../context.js';
import type { BotDeps } from '../services.js';

/** The rate limiter's answer: a line in chat, and a pressed button answered so the client stops spinning. */
function tooFast(ctx: BotContext): void {
  const text = ctx.t('rate-limited');
  const answer = ctx.callbackQuery ? ctx.answerCallbackQuery({ text }) : ctx.reply(text);
  void answer.catch(() => undefined);
}

/** The per-user flood limit (`config.rateLimit`, 10 updates per 3 s by default); undefined when it is turned off. */
export function rateLimit(deps: Pick<BotDeps, 'config' | 'redis' | 'logger'>): Middleware<BotContext> | undefined {
  if (deps.config.rateLimit === false) return undefined;
  const rate = deps.config.rateLimit ?? { timeFrameMs: 3000, limit: 10 };
  // With Redis (`REDIS_URL`) every process adds to one count per user, so a flood split across them is held too.
  const shared = deps.redis && { storageClient: ratelimiterStorage(new WindowCounts(deps.redis, deps.logger), rate.timeFrameMs) };
  // Payments are never dropped: a checkout unanswered fails the payment, a payment unhandled is money not credited.
  const keyGenerator = (ctx: BotContext) => (ctx.preCheckoutQuery || ctx.message?.successful_payment ? undefined : ctx.from?.id.toString());
  return limit({
    timeFrame: rate.timeFrameMs,
    limit: rate.limit,
    onLimitExceeded: tooFast,
    keyGenerator,
    keyPrefix: 'bot:user:',
    ...shared,
  });
}
