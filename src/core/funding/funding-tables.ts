import type { Generated, Kysely, Transaction } from 'kysely';
import type { Database, Db } from '../../db/schema.js';

/** The tables of money coming in from chat (migrations/20261123_07_deposit_requests.ts). */
export type FundingTables = {
  deposit_requests: DepositRequestsTable;
  wallet_invoices: WalletInvoicesTable;
  wallet_payments: WalletPaymentsTable;
};

export type DepositStatus = 'pending' | 'approved' | 'rejected';

export interface DepositRequestsTable {
  id: Generated<number>;
  user_id: string;
  amount: number;
  note: string | null;
  status: DepositStatus;
  /** Who decided: `telegram:<user id>` or `admin-cli`. */
  decided_by: string | null;
  decided_at: string | null;
  reason: string | null;
  /** The journal that credited the wallet, once approved. */
  journal_id: number | null;
  /** The chat the request came from, to tell it the decision. */
  chat_id: number | null;
  created_at: string;
}

/** The intended credit an invoice's payload names; `paid_at` is set by its first successful payment. */
export interface WalletInvoicesTable {
  id: string;
  user_id: string;
  chat_id: number;
  amount: number;
  currency: string;
  created_at: string;
  paid_at: string | null;
}

/** One row per charge Telegram reported: the key that makes a repeated `successful_payment` credit nothing. */
export interface WalletPaymentsTable {
  telegram_payment_charge_id: string;
  provider_payment_charge_id: string;
  invoice_id: string;
  user_id: string;
  amount: number;
  currency: string;
  journal_id: number | null;
  created_at: string;
}

export type FundingDb = Kysely<Database & FundingTables>;

/** The core's database with the funding tables beside the core's. */
export function fundingTables(db: Db): FundingDb {
  return db.withTables<FundingTables>();
}

/** The same for an open transaction, so that a journal and a funding row commit together. */
export function fundingTablesIn(trx: Transaction<Database>): Transaction<Database & FundingTables> {
  return trx.withTables<FundingTables>();
}
