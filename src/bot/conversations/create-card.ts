import { InlineKeyboard } from 'grammy';
import type { CreateCardInput } from '../../core/schemas.js';
import type { CreationQuote } from '../../core/views.js';
import type { ConversationContext } from '../context.js';
import { conversationButton } from '../callback-data.js';
import { refusalText } from '../errors.js';
import { cardView, localMoney } from '../format.js';
import { cardKeyboard } from '../keyboards.js';
import type { Services } from '../services.js';
import {
  buttonOf,
  call,
  confirm,
  isTypedAnswer,
  issueText,
  newNonce,
  pick,
  sayRefusal,
  settlePress,
  offer,
  dropButtons,
  waitFor,
  waitForText,
  type Convo,
} from './kit.js';

/** A typed coupon code, or undefined when Skip is tapped. */
async function askCoupon(conversation: Convo, s: Services, ctx: ConversationContext, prompt: string): Promise<string | undefined> {
  const nonce = await newNonce(conversation);
  await offer(conversation, s, ctx, prompt, new InlineKeyboard().text(ctx.t('btn-skip'), conversationButton(nonce, 'skip')));
  const skipped = buttonOf(nonce);
  const reply = await waitFor(conversation, s, (c) => skipped(c) || isTypedAnswer(c));
  if (reply.message) {
    await dropButtons(conversation, s, reply);
    return reply.message.text!.trim();
  }
  await settlePress(conversation, s, reply);
  return undefined;
}

/** Create a card: BIN, plan (limit and fee), name, optional coupon, summary with fee and wallet, confirm. */
export function createCardConversation(s: Services) {
  return async function createCard(conversation: Convo, ctx: ConversationContext) {
    const catalogue = await call(conversation, async () => ({
      bins: await s.core.listBins(),
      plans: await s.core.listPlans(),
    }));
    if ('refused' in catalogue) return sayRefusal(ctx, catalogue.refused);
    const { bins, plans } = catalogue.ok;

    const binChoice = await pick(
      conversation,
      s,
      ctx,
      ctx.t('create-pick-bin'),
      bins.map((b) => ({
        label: ctx.t('bin-label', { bin: b.bin, network: b.network, category: b.wallet ? 'Wallet' : 'Online' }),
        value: b.id,
      })),
    );
    const bin = bins.find((b) => b.id === binChoice.choice)!;
    const planChoice = await pick(
      conversation,
      s,
      binChoice.ctx,
      ctx.t('create-pick-plan'),
      plans.map((p) => ({
        label: ctx.t('plan-label', { name: p.name, limit: localMoney(p.limit), fee: localMoney(p.creationFee) }),
        value: String(p.id),
      })),
    );
    const plan = plans.find((p) => String(p.id) === planChoice.choice)!;

    await planChoice.ctx.reply(ctx.t('create-ask-name'));
    let name = '';
    for (;;) {
      const typed = await waitForText(conversation, s);
      const parsed = s.core.schemas.createCard.shape.name.safeParse(typed.text);
      if (parsed.success) {
        name = parsed.data;
        break;
      }
      await typed.ctx.reply(ctx.t('name-invalid', { message: issueText(ctx.t, parsed.error, 'name') }));
    }

    // The coupon is checked as it is typed; the summary shows the fee after it.
    let coupon: string | undefined;
    let ready: { input: CreateCardInput; quote: CreationQuote } | undefined;
    for (let prompt = ctx.t('create-ask-coupon'); ready === undefined; ) {
      coupon = await askCoupon(conversation, s, ctx, prompt);
      const parsed = s.core.schemas.createCard.safeParse({
        bin_id: bin.id,
        planId: plan.id,
        name,
        ...(coupon ? { coupon_id: coupon } : {}),
      });
      if (!parsed.success) {
        prompt = ctx.t('coupon-invalid', { message: issueText(ctx.t, parsed.error) });
        continue;
      }
      const quoted = await call(conversation, (caller) => s.core.quoteCreateCard(caller, parsed.data));
      if ('ok' in quoted) ready = { input: parsed.data, quote: quoted.ok };
      else if (quoted.refused.code === 'INVALID_COUPON') prompt = refusalText(ctx.t, quoted.refused);
      else return sayRefusal(ctx, quoted.refused);
    }

    const { input, quote } = ready;
    const summary = ctx.t('create-summary', {
      name,
      bin: bin.bin,
      category: bin.wallet ? 'Wallet' : 'Online',
      plan: plan.name,
      limit: localMoney(plan.limit),
      fee: localMoney(quote.fee),
      coupon: coupon ? ctx.t('create-coupon-note', { coupon, planFee: localMoney(quote.planFee) }) : '',
      wallet: localMoney(quote.walletBalance),
      walletAfter: localMoney(quote.walletAfter),
    });
    const confirmed = await confirm(conversation, ctx, s, summary);
    if (!confirmed) return;
    const created = await call(conversation, (caller) => s.core.createCard(caller, input));
    if ('refused' in created) return sayRefusal(confirmed, created.refused);
    const card = created.ok;
    await confirmed.reply(ctx.t('create-done', { name: card.name, masked: card.maskedPan }));
    await confirmed.reply(cardView(ctx.t, card, plan), { reply_markup: cardKeyboard(ctx.t, card) });
  };
}
