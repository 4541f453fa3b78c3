import { localMoney, localMoneyOrNone } from '../ui/format.js';
import type { ConversationContext } from '../context.js';
import { show } from '../ui/screens.js';
import type { Services } from '../services.js';
import type { CardFlowArgs } from './flows.js';
import { call, confirm, sayRefusal, walletAfter, type Convo } from './kit.js';
import { refreshCardView, sayMovementRefused } from './refresh.js';

/** Close: an irreversible-warning with the balance that returns to the wallet, confirm, done. */
export function closeConversation(s: Services) {
  return async function close(conversation: Convo, ctx: ConversationContext, { cardId, viewMessageId }: CardFlowArgs) {
    const card = await call(conversation, (account) => account.getCard(cardId));
    if ('refused' in card) return sayRefusal(ctx, card.refused);
    const confirmed = await confirm(
      conversation,
      ctx,
      s,
      ctx.t('close-warning', { name: card.ok.name, balance: localMoney(card.ok.balance) }),
    );
    if (!confirmed) return;
    const result = await call(conversation, (account) => account.close(cardId));
    if ('refused' in result) return sayMovementRefused(conversation, s, confirmed, result.refused, { cardId, viewMessageId });
    const wallet = await walletAfter(conversation, result.ok.newWalletBalance);
    await show(confirmed, {
      text: ctx.t('close-done', { amount: localMoney(result.ok.balanceWithdrawn), wallet: localMoneyOrNone(wallet) }),
    });
    await refreshCardView(conversation, s, confirmed, { cardId, viewMessageId });
  };
}
