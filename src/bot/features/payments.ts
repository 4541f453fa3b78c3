import { Composer } from 'grammy';
import type { PreCheckoutQuery, SuccessfulPayment } from 'grammy/types';
import { isCardServiceError } from '../card-service/from-core.js';
import type { Cents } from '../card-service/port.js';
import type { CheckoutRefusal, PaidCharge, PaymentCredit } from '../card-service/from-core.js';
import type { BotContext } from '../context.js';
import { adminReporter } from '../runtime/error-boundary.js';
import { localMoney } from '../ui/format.js';
import { accountOf } from '../ui/screens.js';
import { fundingOf, type Services } from '../services.js';

/** An invoice's payload: this prefix and the id of the stored intended credit. */
const PAYLOAD_PREFIX = 'wi:';
const invoiceIdOf = (payload: string) => (payload.startsWith(PAYLOAD_PREFIX) ? payload.slice(PAYLOAD_PREFIX.length) : undefined);

/**
 * Sends a Telegram Payments invoice for `amount` into the caller's wallet; its payload names the stored
 * record of the intended credit, which the checkout and the payment are checked against.
 */
export async function sendWalletInvoice(ctx: BotContext, s: Services, amount: Cents): Promise<void> {
  const providerToken = s.config.paymentProviderToken;
  if (providerToken === undefined) {
    await ctx.reply(ctx.t('button-expired'));
    return;
  }
  const chatId = ctx.chat!.id;
  const invoice = await fundingOf(s).payments.openInvoice({ userId: accountOf(ctx).userId, chatId, amount });
  await ctx.api.sendInvoice(
    chatId,
    ctx.t('invoice-title'),
    ctx.t('invoice-description', { amount: localMoney(amount) }),
    `${PAYLOAD_PREFIX}${invoice.id}`,
    invoice.currency,
    [{ label: ctx.t('invoice-label'), amount: invoice.amount }],
    { provider_token: providerToken },
  );
}

/**
 * Answers pre-checkout queries (they carry no chat): yes only for a user whose private chat is linked
 * with a valid token, paying an invoice of ours that is theirs, unpaid, for exactly its amount and currency.
 * Always answered, within Telegram's 10 seconds: an unexpected error answers no.
 */
export function checkoutFeature(s: Services): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  composer.on('pre_checkout_query', async (ctx) => {
    let refusal: CheckoutRefusal | 'not-linked' | undefined;
    try {
      refusal = await checkoutRefusal(s, ctx.preCheckoutQuery);
    } catch (error) {
      await ctx.answerPreCheckoutQuery(false, { error_message: ctx.t('unexpected-error') }).catch(() => undefined);
      throw error;
    }
    if (refusal === undefined) await ctx.answerPreCheckoutQuery(true);
    else {
      ctx.logger.info({ refusal }, 'checkout refused');
      await ctx.answerPreCheckoutQuery(false, { error_message: ctx.t('checkout-refused', { reason: refusal }) });
    }
  });
  return composer;
}

async function checkoutRefusal(s: Services, query: PreCheckoutQuery): Promise<CheckoutRefusal | 'not-linked' | undefined> {
  const invoiceId = invoiceIdOf(query.invoice_payload);
  if (invoiceId === undefined) return 'unknown';
  // A user's private chat has the user's id.
  const link = await s.links.find(query.from.id);
  if (!link) return 'not-linked';
  try {
    const account = await s.cards.account(link);
    return await fundingOf(s).payments.checkCheckout({
      invoiceId,
      userId: account.userId,
      amount: query.total_amount,
      currency: query.currency,
    });
  } catch (error) {
    if (isCardServiceError(error) && error.code === 'INVALID_TOKEN') return 'not-linked';
    throw error;
  }
}

/**
 * Credits a successful payment to the invoice's user, once per invoice, and thanks them; a second payment
 * of a credited invoice credits nothing, and the user and the admins' chat are told it is to be refunded. It
 * comes before the link check: the money arrived whatever became of the chat's link since the checkout.
 * A payment that cannot be credited is reported to the admins' chat with its charge ids, to refund or
 * credit by hand.
 */
export function successfulPaymentFeature(s: Services): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  composer.on('message:successful_payment', async (ctx) => {
    const charge = chargeOf(ctx.message.successful_payment);
    let credit: PaymentCredit;
    try {
      credit = charge.invoiceId === '' ? { outcome: 'refused', reason: 'unknown' } : await fundingOf(s).payments.credit(charge);
    } catch (error) {
      await reportToAdmins(ctx, s, charge, 'an error');
      throw error;
    }
    const facts = { invoiceId: charge.invoiceId, telegramChargeId: charge.telegramChargeId, amount: charge.amount };
    if (credit.outcome === 'duplicate') {
      ctx.logger.info(facts, 'a repeated successful payment credited nothing');
      return;
    }
    if (credit.outcome === 'refused') {
      ctx.logger.error({ ...facts, reason: credit.reason }, 'a successful payment could not be credited');
      await reportToAdmins(ctx, s, charge, credit.reason);
      await ctx.reply(ctx.t('payment-not-credited'));
      return;
    }
    if (credit.outcome === 'paid-twice') {
      ctx.logger.error({ ...facts, userId: credit.userId }, 'a second payment of an invoice credited nothing; refund it');
      await reportToAdmins(ctx, s, charge, 'the invoice was paid and credited before: this payment credited nothing, refund it');
      await ctx.reply(ctx.t('payment-paid-twice', { amount: localMoney(credit.amount) }));
      return;
    }
    ctx.logger.info({ ...facts, userId: credit.userId }, 'payment credited');
    await ctx.reply(ctx.t('payment-thanks', { amount: localMoney(credit.amount) }));
  });
  return composer;
}

function chargeOf(paid: SuccessfulPayment): PaidCharge {
  return {
    invoiceId: invoiceIdOf(paid.invoice_payload) ?? '',
    telegramChargeId: paid.telegram_payment_charge_id,
    providerChargeId: paid.provider_payment_charge_id,
    amount: paid.total_amount,
    currency: paid.currency,
  };
}

async function reportToAdmins(ctx: BotContext, s: Services, charge: PaidCharge, what: string): Promise<void> {
  await adminReporter(
    ctx.api,
    s,
  )?.(
    `Payment ${charge.telegramChargeId} (provider ${charge.providerChargeId}) of ${charge.amount} ${charge.currency} ` +
      `for invoice ${charge.invoiceId || '(not ours)'} in chat ${ctx.chat?.id}: ${what}. Check it; refund or credit by hand if needed.`,
  );
}
