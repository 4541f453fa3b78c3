import type { Cents } from '../card-service/port.js';
import type { ConversationContext } from '../context.js';
import { refusalMessage } from '../ui/refusal-texts.js';
import { localMoney, localMoneyOrNone } from '../ui/format.js';
import { show } from '../ui/screens.js';
import type { Services } from '../services.js';
import type { CardFlowArgs } from './flows.js';
import { askAmount, askPresetAmount, call, confirm, sayRefusal, walletAfter, type Convo } from './kit.js';
import { refreshCardView, sayMovementRefused } from './refresh.js';

/**
 * Withdraw: the quote's refusal (the cooldown, the card's state) and the card's balance first (nothing is
 * asked while refused or when there is nothing to withdraw), then the amount (limits in the prompt; an
 * amount the quote for it refuses is refused here, in the quote's own refusal, with the most that would
 * pass), confirm, done. The bot holds no rule: the quote's `refusal` is the service's.
 */
/** The amounts a withdrawal offers as buttons, in cents, besides "All". */
export const WITHDRAW_PRESETS: readonly Cents[] = [1000, 2500, 5000];

export function withdrawConversation(s: Services) {
  return async function withdraw(conversation: Convo, ctx: ConversationContext, { cardId, viewMessageId }: CardFlowArgs) {
    const card = await call(conversation, (account) => account.getCard(cardId));
    if ('refused' in card) return sayRefusal(ctx, card.refused);
    const { withdrawMin, withdrawMax } = s.cards.rules;
    const quote = await call(conversation, (account) => account.quoteWithdrawal(cardId));
    if ('refused' in quote) return sayRefusal(ctx, quote.refused);
    // A service with no quote: the card's balance bounds the amount, and the service checks the rest.
    const q = quote.ok ?? { cardBalance: card.ok.balance, maxAmount: Math.min(card.ok.balance, withdrawMax), cooldownSeconds: 0 };
    if (q.refusal) return sayRefusal(ctx, q.refusal);
    if (q.maxAmount < withdrawMin) {
      await ctx.reply(ctx.t('withdraw-nothing', { name: card.ok.name, balance: localMoney(q.cardBalance), min: localMoney(withdrawMin) }));
      return;
    }
    const prompt = ctx.t('withdraw-ask', {
      name: card.ok.name,
      balance: localMoney(q.cardBalance),
      min: localMoney(withdrawMin),
      max: localMoney(q.maxAmount),
    });
    // Presets within what the card holds, and "All": the most it may give now.
    const presets = WITHDRAW_PRESETS.filter((preset) => preset < q.maxAmount);
    let amount = await askPresetAmount(conversation, s, ctx, prompt, s.cards.rules.schemas.withdraw, presets, q.maxAmount);
    for (;;) {
      const asked = amount;
      const quoted = await call(conversation, (account) => account.quoteWithdrawal(cardId, { amount: asked }));
      if ('refused' in quoted) return sayRefusal(ctx, quoted.refused);
      const maxNow = ctx.t('withdraw-max-now', { max: localMoney(quoted.ok?.maxAmount ?? q.maxAmount) });
      if (quoted.ok === undefined) {
        // A service with no quote: the amount stays within the range offered (the card's balance), the service checks the rest.
        if (amount <= q.maxAmount) break;
        await ctx.reply(maxNow);
      } else {
        const refusal = quoted.ok.refusal;
        if (!refusal) break;
        if (refusal.code !== 'INSUFFICIENT_CARD_BALANCE') return sayRefusal(ctx, refusal);
        await ctx.reply(`${refusalMessage(ctx.t, refusal)}\n${maxNow}`);
      }
      amount = await askAmount(conversation, s, s.cards.rules.schemas.withdraw);
    }
    const confirmed = await confirm(conversation, ctx, s, ctx.t('withdraw-confirm', { amount: localMoney(amount), name: card.ok.name }));
    if (!confirmed) return;
    const result = await call(conversation, (account) => account.withdraw(cardId, { amount }));
    if ('refused' in result) return sayMovementRefused(conversation, s, confirmed, result.refused, { cardId, viewMessageId });
    const r = result.ok;
    const wallet = localMoneyOrNone(await walletAfter(conversation, r.walletBalance));
    await show(confirmed, {
      text: ctx.t('withdraw-done', { amount: localMoney(r.amountWithdrawn), cardBalance: localMoney(r.newCardBalance), wallet }),
    });
    await refreshCardView(conversation, s, confirmed, { cardId, viewMessageId });
  };
}
