import type { ConversationContext } from '../context.js';
import { cardView } from '../format.js';
import { cardKeyboard } from '../keyboards.js';
import type { Services } from '../services.js';
import type { CardFlowArgs } from './flows.js';
import { call, type Convo } from './kit.js';

/** After an operation, the card view the flow started from is redrawn in place. */
export async function refreshCardView(
  conversation: Convo,
  ctx: ConversationContext,
  s: Services,
  { cardId, viewMessageId }: CardFlowArgs,
): Promise<void> {
  if (!viewMessageId || !ctx.chat) return;
  const outcome = await call(conversation, async (caller) => {
    const card = await s.core.getCard(caller, cardId);
    const plan = (await s.core.listPlans()).find((p) => p.id === card.planId);
    return { card, plan };
  });
  if (!('ok' in outcome)) return;
  const { card, plan } = outcome.ok;
  await ctx.api
    .editMessageText(ctx.chat.id, viewMessageId, cardView(ctx.t, card, plan), { reply_markup: cardKeyboard(ctx.t, card) })
    .catch(() => undefined);
}
