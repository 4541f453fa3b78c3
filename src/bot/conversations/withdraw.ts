import { localMoney } from '../format.js';
import type { ConversationContext } from '../context.js';
import type { Services } from '../services.js';
import type { CardFlowArgs } from './flows.js';
import { askAmount, call, confirm, sayRefusal, type Convo } from './kit.js';
import { refreshCardView } from './refresh.js';

/** Withdraw: amount (limits in the prompt), confirm, done. */
export function withdrawConversation(s: Services) {
  return async function withdraw(conversation: Convo, ctx: ConversationContext, { cardId, viewMessageId }: CardFlowArgs) {
    const card = await call(conversation, (caller) => s.core.getCard(caller, cardId));
    if ('refused' in card) return sayRefusal(ctx, card.refused);
    const { withdrawMin, withdrawMax } = s.core.settings;
    await ctx.reply(
      ctx.t('withdraw-ask', {
        name: card.ok.name,
        balance: localMoney(card.ok.balance),
        min: localMoney(withdrawMin),
        max: localMoney(withdrawMax),
      }),
    );
    const amount = await askAmount(conversation, s, s.core.schemas.withdraw);
    const confirmed = await confirm(conversation, ctx, s, ctx.t('withdraw-confirm', { amount: localMoney(amount), name: card.ok.name }));
    if (!confirmed) return;
    const result = await call(conversation, (caller) => s.core.withdraw(caller, cardId, { amount }));
    if ('refused' in result) return sayRefusal(confirmed, result.refused);
    const r = result.ok;
    await confirmed.reply(
      ctx.t('withdraw-done', {
        amount: localMoney(r.amountWithdrawn),
        cardBalance: localMoney(r.newCardBalance),
        wallet: localMoney(r.walletBalance),
      }),
    );
    await refreshCardView(conversation, confirmed, s, { cardId, viewMessageId });
  };
}
