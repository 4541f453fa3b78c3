import { localMoney } from '../format.js';
import type { ConversationContext } from '../context.js';
import type { Services } from '../services.js';
import type { CardFlowArgs } from './flows.js';
import { call, confirm, sayRefusal, type Convo } from './kit.js';
import { refreshCardView } from './refresh.js';

/** Close: an irreversible-warning with the balance that returns to the wallet, confirm, done. */
export function closeConversation(s: Services) {
  return async function close(conversation: Convo, ctx: ConversationContext, { cardId, viewMessageId }: CardFlowArgs) {
    const card = await call(conversation, (caller) => s.core.getCard(caller, cardId));
    if ('refused' in card) return sayRefusal(ctx, card.refused);
    const confirmed = await confirm(
      conversation,
      ctx,
      s,
      ctx.t('close-warning', { name: card.ok.name, balance: localMoney(card.ok.balance) }),
    );
    if (!confirmed) return;
    const result = await call(conversation, (caller) => s.core.close(caller, cardId));
    if ('refused' in result) return sayRefusal(confirmed, result.refused);
    await confirmed.reply(
      ctx.t('close-done', { amount: localMoney(result.ok.balanceWithdrawn), wallet: localMoney(result.ok.newWalletBalance) }),
    );
    await refreshCardView(conversation, confirmed, s, { cardId, viewMessageId });
  };
}
