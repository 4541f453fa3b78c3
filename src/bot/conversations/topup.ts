import type { Cents } from '../card-service/port.js';
import type { ConversationContext } from '../context.js';
import { refusalMessage, type Refusal } from '../ui/refusal-texts.js';
import { categoryText, localMoney, localMoneyOrNone } from '../ui/format.js';
import { show } from '../ui/screens.js';
import type { Services } from '../services.js';
import type { CardFlowArgs } from './flows.js';
import { askPresetAmount, call, confirm, sayRefusal, walletAfter, type Convo } from './kit.js';
import { refreshCardView, sayMovementRefused } from './refresh.js';

/** The amounts offered as buttons in the amount step (cents); "Other" types one. */
export const TOPUP_PRESETS: readonly Cents[] = [1000, 2500, 5000, 10000];

/**
 * Top-up: a refusal the quote foresees whatever the amount (the cooldown, the card's state) first, nothing
 * asked then; then the amount (buttons or typed); an amount the quote says the service would refuse is
 * refused here, in the quote's own refusal, with the most that would pass (no cooldown starts); then the
 * quote with the platform fee and total, confirm, done. The bot holds no rule: the quote's `refusal` is
 * the service's.
 */
export function topupConversation(s: Services) {
  return async function topup(conversation: Convo, ctx: ConversationContext, { cardId, viewMessageId, amount: given }: CardFlowArgs) {
    const card = await call(conversation, (account) => account.getCard(cardId));
    if ('refused' in card) return sayRefusal(ctx, card.refused);
    const { topupMin, topupMax } = s.cards.rules;
    const before = await call(conversation, (account) => account.quoteTopup(cardId, { amount: topupMin }));
    if ('refused' in before) return sayRefusal(ctx, before.refused);
    const early = before.ok?.refusal;
    if (early && !refusesTheAmount(early)) return sayRefusal(ctx, early);
    // What this card can take now (its plan's room and the wallet, fee included), not the service-wide range.
    const canTake = Math.min(topupMax, before.ok?.maxAmount ?? topupMax);
    if (canTake < topupMin) return void (await ctx.reply(ctx.t('topup-nothing-now', { min: localMoney(topupMin) })));
    let prompt = ctx.t('topup-ask', { name: card.ok.name, min: localMoney(topupMin), max: localMoney(canTake) });
    // A remote card the bot did not create: its limit is not known here, and the service counts a refused attempt.
    if (before.ok && 'limitUnknown' in before.ok && before.ok.limitUnknown) prompt = `${prompt}\n${ctx.t('topup-limit-unknown')}`;
    const presets = TOPUP_PRESETS.filter((preset) => preset <= canTake);
    let typed = given !== undefined && s.cards.rules.schemas.topup.safeParse({ amount: given / 100 }).success ? given : undefined;
    for (;;) {
      const amount = typed ?? (await askPresetAmount(conversation, s, ctx, prompt, s.cards.rules.schemas.topup, presets));
      typed = undefined;
      const quote = await call(conversation, (account) => account.quoteTopup(cardId, { amount }));
      if ('refused' in quote) {
        // The flow goes on (the amount is asked again): the refusal alone, no hint of a flow that has ended.
        await ctx.reply(refusalMessage(ctx.t, quote.refused));
        continue;
      }
      const q = quote.ok;
      // The quote's refusal (the service's, or the bounds of the card's plan the bot knows): an amount over
      // what the card or the wallet takes is asked again, with the most that would pass; any other ends the flow.
      const refusal = q?.refusal;
      if (refusal && !refusesTheAmount(refusal)) return sayRefusal(ctx, refusal);
      if (refusal) {
        const maxAmount = q?.maxAmount ?? topupMax;
        if (maxAmount < topupMin) {
          return void (await ctx.reply(`${refusalMessage(ctx.t, refusal)}\n${ctx.t('topup-nothing-now', { min: localMoney(topupMin) })}`));
        }
        prompt = `${refusalMessage(ctx.t, refusal)}\n${ctx.t('topup-max-now', { max: localMoney(maxAmount) })}`;
        continue;
      }
      let text: string;
      if (q === undefined || 'feeUnknown' in q) {
        // A service with no quote: the fee is known once the top-up is done.
        text = ctx.t('topup-confirm-unquoted', { name: card.ok.name, amount: localMoney(amount) });
      } else {
        const wallet = await walletAfter(conversation, q.walletBalance);
        text = ctx.t('topup-quote', {
          amount: localMoney(q.amount ?? amount),
          category: categoryText(ctx.t, q.category ?? card.ok.category),
          fee: localMoney(q.platformFee),
          total: localMoney(q.totalCharged),
          walletAfter: localMoneyOrNone(wallet === undefined ? undefined : wallet - q.totalCharged),
        });
      }
      const confirmed = await confirm(conversation, ctx, s, text);
      if (!confirmed) return;
      const result = await call(conversation, (account) => account.topup(cardId, { amount }));
      if ('refused' in result) return sayMovementRefused(conversation, s, confirmed, result.refused, { cardId, viewMessageId });
      const r = result.ok;
      const wallet = localMoneyOrNone(await walletAfter(conversation, r.walletBalance));
      const done = {
        amount: localMoney(amount),
        fee: localMoney(r.platformFee),
        total: localMoney(r.totalCharged),
        cardBalance: localMoney(r.newCardBalance),
        wallet,
      };
      await show(confirmed, { text: ctx.t('topup-done', done) });
      await refreshCardView(conversation, s, confirmed, { cardId, viewMessageId });
      return;
    }
  };
}

/** A refusal of this amount (the plan's limit, the wallet), answered with the most that would pass; any other ends the flow. */
function refusesTheAmount(refusal: Refusal): boolean {
  return refusal.code === 'CARD_LIMIT_EXCEEDED' || refusal.code === 'INSUFFICIENT_WALLET_BALANCE';
}
