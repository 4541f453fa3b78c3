import { Composer, GrammyError } from 'grammy';
import type { BotContext } from '../context.js';
import { CHALLENGE_BUTTON, challengeOutcome, parseChallengeButton } from '../ui/challenges.js';
import { accountOf } from '../ui/screens.js';

/**
 * Approve and Decline under a pushed purchase approval (3-D Secure out of band): the core takes the first
 * answer before the expiry only, and the message shows the outcome as it is then, buttons gone. Reached
 * in a linked chat only: a chat whose link ended, or whose token was revoked, is answered `not-linked`
 * before this and records nothing.
 */
export function challengesFeature(): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  composer.callbackQuery(CHALLENGE_BUTTON, async (ctx) => {
    const button = parseChallengeButton(ctx.callbackQuery.data)!;
    const account = accountOf(ctx);
    if (account.answerChallenge === undefined) return void (await ctx.answerCallbackQuery({ text: ctx.t('button-expired') }));
    const { answered, challenge } = await account.answerChallenge(button.challengeId, button.answer);
    // Unchanged when another tap (or chat) drew the same outcome first: Telegram refuses an edit that changes nothing.
    await ctx.editMessageText(challengeOutcome(ctx.t, challenge)).catch(unlessUnchanged);
    const notice = answered ? undefined : ctx.t(challenge.status === 'expired' ? 'challenge-too-late' : 'challenge-answered-already');
    await ctx.answerCallbackQuery(notice ? { text: notice } : undefined);
  });
  return composer;
}

function unlessUnchanged(error: unknown): void {
  if (!(error instanceof GrammyError && /message is not modified/i.test(error.description))) throw error;
}
