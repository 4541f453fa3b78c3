import { localMoney, localMoneyOrNone } from '../ui/format.js';
import type { ConversationContext } from '../context.js';
import { closeRefusalText } from '../ui/refusal-texts.js';
import { show } from '../ui/screens.js';
import type { Services } from '../services.js';
import type { CardFlowArgs } from './flows.js';
import { call, confirm, sayRefusal, walletAfter, type Convo } from './kit.js';
import { refreshCardView, sayMovementRefused } from './refresh.js';

/**
 * Close: the wait first, when the service's withdrawal quote says the card is inside the cooldown that
 * closures share with withdrawals (nothing is asked then); an irreversible-warning with the balance that
 * returns to the wallet, confirm, done. A service with no quote (remote mode) refuses after Confirm, and
 * that refusal is worded about closing too.
 */
export function closeConversation(s: Services) {
  return async function close(conversation: Convo, ctx: ConversationContext, { cardId, viewMessageId }: CardFlowArgs) {
    const card = await call(conversation, (account) => account.getCard(cardId));
    if ('refused' in card) return sayRefusal(ctx, card.refused);
    const quote = await call(conversation, (account) => account.quoteWithdrawal(cardId));
    if ('refused' in quote) return sayRefusal(ctx, quote.refused);
    const cooldown = quote.ok?.refusal;
    if (cooldown?.code === 'WITHDRAW_COOLDOWN') return void (await ctx.reply(closeRefusalText(ctx.t, cooldown)));
    const confirmed = await confirm(
      conversation,
      ctx,
      s,
      ctx.t('close-warning', { name: card.ok.name, balance: localMoney(card.ok.balance) }),
    );
    if (!confirmed) return;
    const result = await call(conversation, (account) => account.close(cardId));
    if ('refused' in result) {
      const refused = result.refused;
      if (refused.code !== 'WITHDRAW_COOLDOWN') return sayMovementRefused(conversation, s, confirmed, refused, { cardId, viewMessageId });
      return void (await show(confirmed, { text: closeRefusalText(ctx.t, refused) }));
    }
    const wallet = await walletAfter(conversation, result.ok.newWalletBalance);
    await show(confirmed, {
      text: ctx.t('close-done', { amount: localMoney(result.ok.balanceWithdrawn), wallet: localMoneyOrNone(wallet) }),
    });
    await refreshCardView(conversation, s, confirmed, { cardId, viewMessageId });
  };
}
