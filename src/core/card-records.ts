import { randomUUID } from 'node:crypto';
import type { CardTransactionsTable, Executor } from '../db/schema.js';
import type { Cents } from './money.js';

export interface CardTransactionRecord {
  id?: string;
  cardId: string;
  userId: string;
  journalId: number | null;
  status: CardTransactionsTable['status'];
  side: CardTransactionsTable['side'];
  type: string;
  amount: Cents;
  currency: string;
  merchantName: string;
  declineCode?: string | null;
  at: string;
}

/** One line of the card's statement (what `GET /cards/transactions` lists). Returns its id. */
export async function recordCardTransaction(ex: Executor, record: CardTransactionRecord): Promise<string> {
  const id = record.id ?? randomUUID();
  await ex
    .insertInto('card_transactions')
    .values({
      id,
      card_id: record.cardId,
      user_id: record.userId,
      journal_id: record.journalId,
      status: record.status,
      side: record.side,
      amount: record.amount,
      currency: record.currency,
      type: record.type,
      merchant_name: record.merchantName,
      original_amount: record.amount,
      original_currency: record.currency,
      decline_code: record.declineCode ?? null,
      created_at: record.at,
      updated_at: record.at,
    })
    .execute();
  return id;
}
