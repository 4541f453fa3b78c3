import { compiledOnce } from '../db/compiled-query.js';
import { newRecordId } from './ids.js';
import type { CardTransactionsTable, Executor, NewCardTransactionRow } from '../db/schema.js';
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

const COLUMNS = [
  'id',
  'card_id',
  'user_id',
  'journal_id',
  'status',
  'side',
  'amount',
  'currency',
  'type',
  'merchant_name',
  'original_amount',
  'original_currency',
  'decline_code',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof NewCardTransactionRow)[];

// Compiled once: every movement writes a statement line.
const insertLine = compiledOnce(COLUMNS.length, (ex, ...values: unknown[]) =>
  ex.insertInto('card_transactions').values(Object.fromEntries(COLUMNS.map((c, i) => [c, values[i]])) as NewCardTransactionRow),
);

/** One line of the card's statement (what `GET /cards/transactions` lists). Returns its id. */
export async function recordCardTransaction(ex: Executor, record: CardTransactionRecord): Promise<string> {
  const id = record.id ?? newRecordId();
  const row: NewCardTransactionRow = {
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
  };
  await insertLine.execute(ex, ...COLUMNS.map((column) => row[column]));
  return id;
}
