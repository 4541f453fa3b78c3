import { compiledOnce } from '../../db/compiled-query.js';
import { newRecordId } from '../ids.js';
import type { CardTransactionsTable, Executor, NewCardTransactionRow } from '../../db/schema.js';
import type { Cents } from '../ledger/money.js';

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

type LineValues = Omit<NewCardTransactionRow, 'card_position'>;

// Compiled once: every movement writes a statement line. The line takes the place after the last one
// its card's counts row remembers (migrations/20261124_04_card_positions.ts): SQLite has one writer at a
// time, so no other line can take it meanwhile. On Postgres a BEFORE INSERT trigger stamps the position
// under the counts row's lock and overrides this value.
const insertLine = compiledOnce(COLUMNS.length, (ex, ...values: unknown[]) => {
  const line = Object.fromEntries(COLUMNS.map((c, i) => [c, values[i]])) as LineValues;
  return ex.insertInto('card_transactions').values((eb) => ({
    ...line,
    card_position: eb(
      eb.fn.coalesce(
        eb
          .selectFrom('card_transaction_counts')
          .select('last_position')
          .where('user_id', '=', line.user_id)
          .where('card_id', '=', line.card_id),
        eb.lit(0),
      ),
      '+',
      eb.lit(1),
    ),
  }));
});

/** One line of the card's statement (what `GET /cards/transactions` lists). Returns its id. */
export async function recordCardTransaction(ex: Executor, record: CardTransactionRecord): Promise<string> {
  const id = record.id ?? newRecordId();
  const row: LineValues = {
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

/** A top-up's line (the cardholder's, or auto top-up's): money onto the card from the wallet. */
export function recordTopupLine(
  ex: Executor,
  line: { id: string; cardId: string; userId: string; journalId: number; amount: number; currency: string; at: string },
): Promise<string> {
  return recordCardTransaction(ex, { ...line, status: 'Approved', side: 'Credit', type: 'topup', merchantName: 'Wallet top-up' });
}
