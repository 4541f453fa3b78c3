import { InlineKeyboard } from 'grammy';
import type { Bin, CardAccount, CreateCardInput, CreationQuote, Plan } from '../card-service/port.js';
import type { ConversationContext } from '../context.js';
import { conversationButton } from '../ui/callback-data.js';
import { refusalText } from '../ui/refusal-texts.js';
import { cardView, categoryText, localMoney } from '../ui/format.js';
import { cardKeyboard } from '../ui/keyboards.js';
import { show } from '../ui/screens.js';
import type { Services } from '../services.js';
import {
  buttonOf,
  call,
  confirmChoosing,
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

/** A service with no creation quote: the plan's fee, before any coupon, against the wallet as it is. */
async function planFeeQuote(account: CardAccount, fee: number): Promise<CreationQuote> {
  const { balance } = await account.walletBalance();
  return { planFee: fee, fee, walletBalance: balance, walletAfter: balance - fee };
}

/** The card types a cardholder chooses from on a new card's summary, the default first. */
const CARD_TYPES = ['multi_use', 'single_use', 'merchant_locked'] as const;

/** A new card like an existing one: its BIN and plan, of the given type (a used single-use card's "New card like this"). */
export interface CardTemplate {
  likeCardId: string;
  type: 'single_use';
}

/**
 * Create a card: BIN, plan (limit and fee), name, optional coupon, summary with fee and wallet, confirm.
 * From a template, the BIN and plan are the template card's (asked only if either is no longer offered).
 */
export function createCardConversation(s: Services) {
  return async function createCard(conversation: Convo, ctx: ConversationContext, template?: CardTemplate) {
    const catalogue = await call(conversation, async (account) => ({
      bins: await account.listBins(),
      plans: await account.listPlans(),
      like: template ? await account.getCard(template.likeCardId) : undefined,
    }));
    if ('refused' in catalogue) return sayRefusal(ctx, catalogue.refused);
    const { bins, plans, like } = catalogue.ok;
    const likeBin = bins.find((b) => b.id === like?.binId);
    const likePlan = plans.find((p) => p.id === like?.planId);
    if (like && likeBin && likePlan) {
      await ctx.reply(ctx.t('create-like', { name: like.name, bin: likeBin.bin, plan: likePlan.name }));
      return nameAndConfirm(conversation, s, ctx, { bin: likeBin, plan: likePlan, type: template?.type });
    }

    const binChoice = await pick(
      conversation,
      s,
      ctx,
      ctx.t('create-pick-bin'),
      bins.map((b) => ({
        label: ctx.t('bin-label', { bin: b.bin, network: b.network ?? '—', category: categoryText(ctx.t, b.wallet ? 'Wallet' : 'Online') }),
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
    // A template whose BIN or plan is no longer offered still gives its type (a single-use card stays single-use).
    await nameAndConfirm(conversation, s, planChoice.ctx, { bin, plan, type: template?.type });
  };
}

/** The rest of a creation once its BIN and plan are known: name, coupon, summary, confirm. */
async function nameAndConfirm(
  conversation: Convo,
  s: Services,
  ctx: ConversationContext,
  { bin, plan, type }: { bin: Bin; plan: Plan; type?: CardTemplate['type'] },
): Promise<void> {
  await ctx.reply(ctx.t('create-ask-name'));
  let name = '';
  for (;;) {
    const typed = await waitForText(conversation, s);
    const parsed = s.cards.rules.schemas.createCard.shape.name.safeParse(typed.text);
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
    const parsed = s.cards.rules.schemas.createCard.safeParse({
      bin_id: bin.id,
      planId: plan.id,
      name,
      ...(coupon ? { coupon_id: coupon } : {}),
      ...(type ? { type } : {}),
    });
    if (!parsed.success) {
      prompt = ctx.t('coupon-invalid', { message: issueText(ctx.t, parsed.error) });
      continue;
    }
    const quoted = await call(
      conversation,
      async (account) => (await account.quoteCreateCard(parsed.data)) ?? (await planFeeQuote(account, plan.creationFee)),
    );
    if ('ok' in quoted) ready = { input: parsed.data, quote: quoted.ok };
    else if (quoted.refused.code === 'INVALID_COUPON') prompt = refusalText(ctx.t, quoted.refused);
    else return sayRefusal(ctx, quoted.refused);
  }

  const { input, quote } = ready;
  const summaryText = ctx.t('create-summary', {
    name,
    bin: bin.bin,
    category: categoryText(ctx.t, bin.wallet ? 'Wallet' : 'Online'),
    plan: plan.name,
    limit: localMoney(plan.limit),
    fee: localMoney(quote.fee),
    coupon: coupon ? ctx.t('create-coupon-note', { coupon, planFee: localMoney(quote.planFee) }) : '',
    wallet: localMoney(quote.walletBalance),
    walletAfter: localMoney(quote.walletAfter),
  });
  // The card's type, chosen on the summary (embedded: a remote service's cards have none): multi-use unless tapped.
  const typed = s.cards.mode === 'embedded' && type === undefined;
  const answer = await confirmChoosing(conversation, ctx, s, {
    initial: 'multi_use',
    text: (chosen) => (typed ? `${summaryText}\n${ctx.t('create-type', { type: chosen })}` : summaryText),
    options: (chosen) =>
      typed
        ? CARD_TYPES.map((value) => ({ label: `${value === chosen ? '✓ ' : ''}${ctx.t('btn-card-type', { type: value })}`, value }))
        : [],
  });
  if (!answer) return;
  const { ctx: confirmed, chosen } = answer;
  const chosenType = CARD_TYPES.find((value) => value === chosen);
  // Through the schema, as the template's type went (the type is the embedded core's, beside the spec's fields).
  const request =
    typed && chosenType && chosenType !== 'multi_use' ? s.cards.rules.schemas.createCard.parse({ ...input, type: chosenType }) : input;
  const created = await call(conversation, (account) => account.createCard(request));
  if ('refused' in created) return show(confirmed, { text: refusalText(ctx.t, created.refused) });
  // The summary becomes the new card's view, ready for its first top-up.
  const card = created.ok;
  await show(confirmed, {
    text: `${ctx.t('create-done', { name: card.name, masked: card.maskedPan })}\n\n${cardView(ctx.t, card, plan)}`,
    keyboard: cardKeyboard(ctx.t, card, undefined, { watch: s.cards.watchCard !== undefined, controls: s.cards.mode === 'embedded' }),
  });
}
