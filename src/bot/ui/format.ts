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
  // A card being issued: what its wallet holds for it.
  return card.status === 'processing' ? `${view}\n${t('card-processing-note', { fee: localMoney(card.heldFee ?? 0) })}` : view;
}

export function transactionLine(t: T, tx: CardTransaction): string {
  return t('tx-line', {
    at: localDateTime(tx.createdAt),
    name: tx.cardName,
    side: t('tx-side', { side: tx.side }),
    amount: localMoney(tx.amount, tx.currency),
    status: t('tx-status', { status: tx.status }),
    reason: tx.declineCode ? ` (${t('decline-reason', { code: tx.declineCode })})` : '',
    merchant: tx.merchantName,
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
