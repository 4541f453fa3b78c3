import { localMoney } from '../format.js';
import type { ConversationContext } from '../context.js';
import type { Services } from '../services.js';
import type { CardFlowArgs } from './flows.js';
import { askAmount, call, confirm, sayRefusal, type Convo } from './kit.js';
import { refreshCardView } from './refresh.js';

/** Top-up: amount (limits in the prompt), quote with the platform fee and total, confirm, done. */
export function topupConversation(s: Services) {
  return async function topup(conversation: Convo, ctx: ConversationContext, { cardId, viewMessageId }: CardFlowArgs) {
    const card = await call(conversation, (caller) => s.core.getCard(caller, cardId));
    if ('refused' in card) return sayRefusal(ctx, card.refused);
    const { topupMin, topupMax } = s.core.settings;
    await ctx.reply(ctx.t('topup-ask', { name: card.ok.name, min: localMoney(topupMin), max: localMoney(topupMax) }));
    for (;;) {
      const amount = await askAmount(conversation, s, s.core.schemas.topup);
      const quote = await call(conversation, (caller) => s.core.quoteTopup(caller, cardId, { amount }));
      if ('refused' in quote) {
        await sayRefusal(ctx, quote.refused);
        continue;
      }
      const q = quote.ok;
      const text = ctx.t('topup-quote', {
        amount: localMoney(q.amount),
        category: q.category,
        fee: localMoney(q.platformFee),
        total: localMoney(q.totalCharged),
        walletAfter: localMoney(q.walletBalance - q.totalCharged),
      });
      const confirmed = await confirm(conversation, ctx, s, text);
      if (!confirmed) return;
      const result = await call(conversation, (caller) => s.core.topup(caller, cardId, { amount }));
      if ('refused' in result) return sayRefusal(confirmed, result.refused);
      const r = result.ok;
      await confirmed.reply(
        ctx.t('topup-done', {
          amount: localMoney(amount),
          fee: localMoney(r.platformFee),
          cardBalance: localMoney(r.newCardBalance),
          wallet: localMoney(r.walletBalance),
        }),
      );
      await refreshCardView(conversation, confirmed, s, { cardId, viewMessageId });
      return;
    }
  };
}
