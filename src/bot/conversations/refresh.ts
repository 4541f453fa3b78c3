import type { ConversationContext } from '../context.js';
import { cardView, localMoney } from '../ui/format.js';
import { cardKeyboard } from '../ui/keyboards.js';
import type { Services } from '../services.js';
import type { CardFlowArgs } from './flows.js';
import { refusalText, type Refusal } from '../ui/refusal-texts.js';
import { show } from '../ui/screens.js';
import { call, type Convo } from './kit.js';
import type { Card } from '../card-service/port.js';

/** After an operation, the card view the flow started from is redrawn in place (from `read`, when the card was just read). */
export async function refreshCardView(
  conversation: Convo,
  s: Services,
  ctx: ConversationContext,
  { cardId, viewMessageId }: CardFlowArgs,
  read?: Card,
): Promise<void> {
  if (!viewMessageId || !ctx.chat) return;
  const outcome = await call(conversation, async (account) => {
    const card = read ?? (await account.getCard(cardId));
    const plan = (await account.listPlans()).find((p) => p.id === card.planId);
    return { card, plan };
  });
  if (!('ok' in outcome)) return;
  const { card, plan } = outcome.ok;
  await ctx.api
    .editMessageText(ctx.chat.id, viewMessageId, cardView(ctx.t, card, plan), {
      reply_markup: cardKeyboard(ctx.t, card, undefined, { watch: s.cards.watchCard !== undefined, controls: s.cards.mode === 'embedded' }),
    })
    .catch(() => undefined);
}

/**
 * A movement refused: the refusal said in the confirmation's place (`ctx` is the press on Confirm); when
 * its outcome is not known (the answer was lost), the card and the wallet are read again and shown beside
 * it, and the card view redrawn, so the chat shows what the service now says rather than a guess.
 */
export async function sayMovementRefused(
  conversation: Convo,
  s: Services,
  ctx: ConversationContext,
  refusal: Refusal,
  args: CardFlowArgs,
): Promise<void> {
  const text = refusalText(ctx.t, refusal);
  if (refusal.code !== 'OUTCOME_UNKNOWN') return void (await show(ctx, { text }));
  const now = await call(conversation, async (account) => {
    const card = await account.getCard(args.cardId);
    return { card, wallet: (await account.walletBalance()).balance };
  });
  if (!('ok' in now)) return void (await show(ctx, { text }));
  const { card, wallet } = now.ok;
  const seen = ctx.t('outcome-now', { name: card.name, cardBalance: localMoney(card.balance), wallet: localMoney(wallet) });
  await show(ctx, { text: `${text}\n\n${seen}` });
  await refreshCardView(conversation, s, ctx, args, card);
}
