import { FluentDateTime, FluentNumber } from '@fluent/bundle';
import type { TranslationVariables } from '@grammyjs/i18n';
import type { MessageEntity } from 'grammy/types';
import type { Cents, Card, CardTransaction, Plan, SensitiveCardDetails } from '../card-service/port.js';

/** A translator (`ctx.t`): figures given as Fluent values are formatted in the text's own language. */
export type T = (key: string, params?: TranslationVariables) => string;

/**
 * An amount for a text: the text formats it for its language with `Intl.NumberFormat`, so the figure
 * always follows the words ("$1,234.50" in English, "1 234,50 $" in Russian).
 *
 * @example t('wallet-balance', { balance: localMoney(wallet.balance) })
 */
export function localMoney(cents: Cents, currency = 'USD'): FluentNumber {
  return new LocalMoney(cents, currency);
}

/** Formatted amounts remembered per language, currency and amount: `Intl` formatting is most of a menu press's text. */
const formattedMoney = new Map<string, string>();
const MAX_REMEMBERED_AMOUNTS = 10_000;

/** An amount Fluent formats in the text's language, as `FluentNumber` does, with the result remembered. */
class LocalMoney extends FluentNumber {
  constructor(
    readonly cents: Cents,
    readonly currency: string,
  ) {
    super(cents / 100, { style: 'currency', currency });
  }

  override toString(scope: Parameters<FluentNumber['toString']>[0]): string {
    const key = `${scope.bundle.locales.join(',')}|${this.currency}|${this.cents}`;
    let text = formattedMoney.get(key);
    if (text === undefined) {
      text = super.toString(scope);
      if (formattedMoney.size >= MAX_REMEMBERED_AMOUNTS) formattedMoney.clear();
      formattedMoney.set(key, text);
    }
    return text;
  }
}

/** An amount a service may leave out: a dash when it did. */
export function localMoneyOrNone(cents: Cents | undefined): FluentNumber | string {
  return cents === undefined ? '—' : localMoney(cents);
}

/** A moment for a text, formatted for its language with `Intl.DateTimeFormat`, in UTC (the chat's zone is unknown). */
export function localDateTime(iso: string): FluentDateTime {
  return new FluentDateTime(Date.parse(iso), {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZone: 'UTC',
    timeZoneName: 'short',
  });
}

export function cardView(t: T, card: Card, plan: Plan | undefined): string {
  const view = t('card-view', {
    name: card.name,
    masked: card.maskedPan,
    balance: localMoney(card.balance),
    status: t('card-status', { status: card.status }),
    plan: plan?.name ?? (card.planId === undefined ? '—' : String(card.planId)),
    limit: localMoneyOrNone(card.limit ?? plan?.limit),
    deposit: localMoneyOrNone(card.deposit),
  });
  // A card being issued: what its wallet holds for it (a remote card the bot did not create: the fee is not known, so not named).
  if (card.status !== 'processing') return view;
  const note = card.heldFee === undefined ? t('card-processing-note-no-fee') : t('card-processing-note', { fee: localMoney(card.heldFee) });
  return `${view}\n${note}`;
}

/**
 * The statement lines the card service writes itself, for its own movements (ours: `Wallet top-up`,
 * `Wallet`, `Initial balance`; other services': `Withdrawal to wallet`, `Card closure`, …), as the kind
 * of line each names. A merchant's own name is not among them and is shown as it came.
 */
const SERVICE_MERCHANTS: ReadonlyMap<string, string> = new Map([
  ['wallet top-up', 'topup'],
  ['top-up', 'topup'],
  ['wallet', 'wallet'],
  ['withdrawal to wallet', 'withdrawal'],
  ['withdrawal', 'withdrawal'],
  ['card closure', 'closure'],
  ['card closed', 'closure'],
  ['initial balance', 'initial'],
  ['initial', 'initial'],
]);

/** A transaction's merchant in the chat's language: the service's own lines translated, a merchant's name as it came. */
export function merchantText(t: T, merchant: string): string {
  const kind = SERVICE_MERCHANTS.get(merchant.trim().toLowerCase());
  return kind === undefined ? merchant : t('merchant-service', { kind, original: merchant });
}

/** A card's or BIN's category (`Wallet`, `Online`) in the chat's language; another shows as it came. */
export function categoryText(t: T, category: string): string {
  const kind = category.trim().toLowerCase();
  return kind === 'wallet' || kind === 'online' ? t('card-category', { kind }) : category;
}

export function transactionLine(t: T, tx: CardTransaction): string {
  return t('tx-line', {
    at: localDateTime(tx.createdAt),
    name: tx.cardName,
    side: t('tx-side', { side: tx.side }),
    amount: localMoney(tx.amount, tx.currency),
    status: t('tx-status', { status: tx.status }),
    reason: tx.declineCode ? ` (${t('decline-reason', { code: tx.declineCode })})` : '',
    merchant: merchantText(t, tx.merchantName),
  });
}

/** What an OTP says of the payment it is for: the merchant and amount, the amount alone, or nothing (a code asked for by e-mail). */
function otpPayment(otp: { amount: Cents; merchantName?: string }): 'merchant' | 'amount' | 'none' {
  if (otp.merchantName?.trim()) return 'merchant';
  return otp.amount > 0 ? 'amount' : 'none';
}

/** A pushed OTP, as a sentence whatever the service told of its payment. */
export function otpPushText(
  t: T,
  otp: { code: string; cardName: string; maskedPan: string; amount: Cents; currency: string; merchantName?: string },
  ttlSeconds: number,
): string {
  return t('otp-push', {
    code: otp.code,
    name: otp.cardName,
    masked: otp.maskedPan,
    payment: otpPayment(otp),
    amount: localMoney(otp.amount, otp.currency),
    merchant: merchantText(t, otp.merchantName ?? ''),
    ttl: ttlSeconds,
  });
}

/** One OTP of a card's list: its code, what it is for (as far as the service says) and when it came. */
export function otpLine(t: T, otp: { code: string; amount: Cents; currency: string; merchantName?: string; createdAt: string }): string {
  return t('otp-line', {
    code: otp.code,
    payment: otpPayment(otp),
    amount: localMoney(otp.amount, otp.currency),
    merchant: merchantText(t, otp.merchantName ?? ''),
    at: localDateTime(otp.createdAt),
  });
}

/** Sensitive details with each value hidden behind a spoiler entity. */
export function detailsMessage(t: T, details: SensitiveCardDetails, ttlSeconds: number): { text: string; entities: MessageEntity[] } {
  let text = `${t('details-title', { ttl: ttlSeconds })}\n${details.name}\n`;
  const entities: MessageEntity[] = [];
  const field = (label: string, value: string) => {
    text += `${label} `;
    entities.push({ type: 'spoiler', offset: text.length, length: value.length });
    text += `${value}\n`;
  };
  field(t('details-number'), details.pan);
  field(t('details-cvv'), details.cvv);
  field(t('details-expiry'), details.exp);
  return { text: text.trimEnd(), entities };
}

/** A typed amount ("25", "25.50", "25,5") as the number the core's schemas expect; NaN when not a number. */
export function parseTypedAmount(text: string): number {
  const cleaned = text
    .trim()
    .replace(/\s|\$|usd/gi, '')
    .replace(',', '.');
  return /^\d+(\.\d+)?$/.test(cleaned) ? Number(cleaned) : Number.NaN;
}
