import type { ConversationContext } from '../context.js';
import { refusalMessage } from '../errors.js';
import { localMoney } from '../format.js';
import type { Services } from '../services.js';
import type { CardFlowArgs } from './flows.js';
import { askAmount, call, confirm, foreseen, sayRefusal, type Convo } from './kit.js';
import { refreshCardView } from './refresh.js';

/**
 * Withdraw: the cooldown and the card's balance first (nothing is asked while the cooldown runs or when
 * there is nothing to withdraw), then the amount (limits in the prompt; more than the card holds is
 * refused here with the most that would pass), confirm, done.
 */
export function withdrawConversation(s: Services) {
  return async function withdraw(conversation: Convo, ctx: ConversationContext, { cardId, viewMessageId }: CardFlowArgs) {
    const card = await call(conversation, (caller) => s.core.getCard(caller, cardId));
    if ('refused' in card) return sayRefusal(ctx, card.refused);
    const { withdrawMin, withdrawCooldownSeconds } = s.core.settings;
    const quote = await call(conversation, (caller) => s.core.quoteWithdrawal(caller, cardId));
    if ('refused' in quote) return sayRefusal(ctx, quote.refused);
    const q = quote.ok;
    if (q.cooldownSeconds > 0) {
      const minutes = Math.max(1, Math.ceil(withdrawCooldownSeconds / 60));
      return sayRefusal(ctx, foreseen('WITHDRAW_COOLDOWN', { seconds: q.cooldownSeconds, minutes }));
    }
    if (q.maxAmount < withdrawMin) {
      await ctx.reply(ctx.t('withdraw-nothing', { name: card.ok.name, balance: localMoney(q.cardBalance), min: localMoney(withdrawMin) }));
      return;
    }
    await ctx.reply(
      ctx.t('withdraw-ask', {
        name: card.ok.name,
        balance: localMoney(q.cardBalance),
        min: localMoney(withdrawMin),
        max: localMoney(q.maxAmount),
      }),
    );
    let amount = await askAmount(conversation, s, s.core.schemas.withdraw);
    while (amount > q.maxAmount) {
      const refusal = foreseen('INSUFFICIENT_CARD_BALANCE', { available: q.cardBalance, requested: amount });
      await ctx.reply(`${refusalMessage(ctx.t, refusal)}\n${ctx.t('withdraw-max-now', { max: localMoney(q.maxAmount) })}`);
      amount = await askAmount(conversation, s, s.core.schemas.withdraw);
    }
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
