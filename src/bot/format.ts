import type { MessageEntity } from 'grammy/types';
import { formatAmount } from '../core/money.js';
import type { Card, CardTransaction, Plan, SensitiveCardDetails } from '../core/views.js';

type T = (key: string, params?: Record<string, string | number>) => string;

export const money = formatAmount;

export function cardView(t: T, card: Card, plan: Plan | undefined): string {
  return t('card-view', {
    name: card.name,
    masked: card.maskedPan,
    balance: money(card.balance),
    status: t('card-status', { status: card.status }),
    plan: plan?.name ?? String(card.planId),
    limit: money(card.limit),
    deposit: money(card.deposit),
  });
}

export function transactionLine(t: T, tx: CardTransaction): string {
  return t('tx-line', {
    at: tx.createdAt.slice(0, 16).replace('T', ' '),
    name: tx.cardName,
    side: t('tx-side', { side: tx.side }),
    amount: money(tx.amount),
    currency: tx.currency,
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
