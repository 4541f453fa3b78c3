import type { ConversationContext } from '../context.js';
import { cardView, money } from '../format.js';
import { cardKeyboard } from '../keyboards.js';
import type { Services } from '../services.js';
import { call, confirm, pick, sayRefusal, waitForText, type Convo } from './kit.js';

const SKIP = '-';

/** Create a card: BIN, plan (limit and fee), name, optional coupon, summary with fee and wallet, confirm. */
export function createCardConversation(s: Services) {
  return async function createCard(conversation: Convo, ctx: ConversationContext) {
    const catalogue = await call(conversation, async (caller) => ({
      bins: await s.core.listBins(),
      plans: await s.core.listPlans(),
      wallet: (await s.core.walletBalance(caller)).balance,
    }));
    if ('refused' in catalogue) return sayRefusal(ctx, catalogue.refused);
    const { bins, plans, wallet } = catalogue.ok;

    const binChoice = await pick(conversation, ctx, ctx.t('create-pick-bin'), bins.map((b) => ({
      label: ctx.t('bin-label', { bin: b.bin, network: b.network, category: b.wallet ? 'Wallet' : 'Online' }),
      value: b.id,
    })));
    const bin = bins.find((b) => b.id === binChoice.choice)!;
    const planChoice = await pick(conversation, binChoice.ctx, ctx.t('create-pick-plan'), plans.map((p) => ({
      label: ctx.t('plan-label', { name: p.name, limit: money(p.limit), fee: money(p.creationFee) }),
      value: String(p.id),
    })));
    const plan = plans.find((p) => String(p.id) === planChoice.choice)!;

    await planChoice.ctx.reply(ctx.t('create-ask-name'));
    let name = '';
    for (;;) {
      const typed = await waitForText(conversation);
      const parsed = s.core.schemas.createCard.shape.name.safeParse(typed.text);
      if (parsed.success) {
        name = parsed.data;
        break;
      }
      await typed.ctx.reply(parsed.error.issues[0]?.message ?? 'Invalid input data');
    }

    const couponAsk = await conversation.external(() => Math.random().toString(36).slice(2, 10));
    await ctx.reply(ctx.t('create-ask-coupon'), {
      reply_markup: { inline_keyboard: [[{ text: ctx.t('btn-skip'), callback_data: `v:${couponAsk}:${SKIP}` }]] },
    });
    const couponReply = await conversation.waitUntil(
      (c) => c.callbackQuery?.data === `v:${couponAsk}:${SKIP}` || (typeof c.message?.text === 'string' && !c.message.text.startsWith('/')),
      { next: true },
    );
    let coupon: string | undefined;
    if (couponReply.callbackQuery) {
      await couponReply.answerCallbackQuery();
      await couponReply.editMessageReplyMarkup({ reply_markup: undefined }).catch(() => undefined);
    } else {
      coupon = couponReply.message!.text!.trim();
    }

    const summary = ctx.t('create-summary', {
      name,
      bin: bin.bin,
      category: bin.wallet ? 'Wallet' : 'Online',
      plan: plan.name,
      limit: money(plan.limit),
      fee: money(plan.creationFee),
      coupon: coupon ? ctx.t('create-coupon-note', { coupon }) : '',
      wallet: money(wallet),
      walletAfter: money(wallet - plan.creationFee),
    });
    const confirmed = await confirm(conversation, ctx, s, summary);
    if (!confirmed) return;
    const parsed = s.core.schemas.createCard.safeParse({ bin_id: bin.id, planId: plan.id, name, ...(coupon ? { coupon_id: coupon } : {}) });
    if (!parsed.success) {
      const detail = parsed.error.issues.map((i) => i.message).join('; ');
      return sayRefusal(confirmed, { code: 'VALIDATION', message: `Invalid input data: ${detail}` });
    }
    const input = parsed.data;
    const created = await call(conversation, (caller) => s.core.createCard(caller, input));
    if ('refused' in created) return sayRefusal(confirmed, created.refused);
    const card = created.ok;
    await confirmed.reply(ctx.t('create-done', { name: card.name, masked: card.maskedPan }));
    await confirmed.reply(cardView(ctx.t, card, plan), { reply_markup: cardKeyboard(ctx.t, card) });
  };
}
