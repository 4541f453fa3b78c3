import type { Cents } from '../../core/money.js';
import type { ConversationContext } from '../context.js';
import { refusalMessage, refusalText } from '../errors.js';
import { localMoney } from '../format.js';
import type { Services } from '../services.js';
import type { CardFlowArgs } from './flows.js';
import { askPresetAmount, call, confirm, foreseen, sayRefusal, type Convo } from './kit.js';
import { refreshCardView } from './refresh.js';

/** The amounts offered as buttons in the amount step (cents); "Other" types one. */
export const TOPUP_PRESETS: readonly Cents[] = [1000, 2500, 5000, 10000];

/**
 * Top-up: the cooldown first (nothing is asked while it runs), then the amount (buttons or typed), a quote
 * the service would refuse is refused here with the most that would pass (no cooldown starts), then the
 * quote with the platform fee and total, confirm, done.
 */
export function topupConversation(s: Services) {
  return async function topup(conversation: Convo, ctx: ConversationContext, { cardId, viewMessageId, amount: given }: CardFlowArgs) {
    const card = await call(conversation, (caller) => s.core.getCard(caller, cardId));
    if ('refused' in card) return sayRefusal(ctx, card.refused);
    const { topupMin, topupMax } = s.core.settings;
    const before = await call(conversation, (caller) => s.core.quoteTopup(caller, cardId, { amount: topupMin }));
    if ('refused' in before) return sayRefusal(ctx, before.refused);
    if (before.ok.cooldownSeconds > 0) return sayRefusal(ctx, foreseen('TOPUP_COOLDOWN', { seconds: before.ok.cooldownSeconds }));
    let prompt = ctx.t('topup-ask', { name: card.ok.name, min: localMoney(topupMin), max: localMoney(topupMax) });
    let typed = given !== undefined && s.core.schemas.topup.safeParse({ amount: given / 100 }).success ? given : undefined;
    for (;;) {
      const amount = typed ?? (await askPresetAmount(conversation, s, ctx, prompt, s.core.schemas.topup, TOPUP_PRESETS));
      typed = undefined;
      const quote = await call(conversation, (caller) => s.core.quoteTopup(caller, cardId, { amount }));
      if ('refused' in quote) {
        await sayRefusal(ctx, quote.refused);
        continue;
      }
      const q = quote.ok;
      if (q.cooldownSeconds > 0) return sayRefusal(ctx, foreseen('TOPUP_COOLDOWN', { seconds: q.cooldownSeconds }));
      const deposit = card.ok.limit - q.depositAvailable;
      const refusal =
        q.amount > q.depositAvailable
          ? foreseen('CARD_LIMIT_EXCEEDED', { deposit, limit: card.ok.limit, available: Math.max(0, q.depositAvailable) })
          : q.totalCharged > q.walletBalance
            ? foreseen('INSUFFICIENT_WALLET_BALANCE', { total: q.totalCharged, amount, fee: q.platformFee, available: q.walletBalance })
            : undefined;
      if (refusal) {
        if (q.maxAmount < topupMin) {
          return void (await ctx.reply(`${refusalText(ctx.t, refusal)}\n${ctx.t('topup-nothing-now', { min: localMoney(topupMin) })}`));
        }
        prompt = `${refusalMessage(ctx.t, refusal)}\n${ctx.t('topup-max-now', { max: localMoney(q.maxAmount) })}`;
        continue;
      }
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
