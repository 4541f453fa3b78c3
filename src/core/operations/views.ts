import type { BinRow, CardOtpRow, CardRow, CardTransactionRow, PlanRow } from '../../db/schema.js';
import type { Cents } from '../ledger/money.js';
import type { BillingAddress } from '../provider/provider.js';
import type { ErrorCode, ParamsOf } from '../rules/errors.js';
import type { PlainRefusal } from '../rules/refusal.js';

/** What the core returns. Amounts are integer cents; the edges format them. */

export interface Caller {
  userId: string;
  walletAccountId: number;
}

export type CardStatus = CardRow['status'];
export type CardCategory = CardRow['category'];

export interface Card {
  id: string;
  /** The card's small integer number (the OTP list's `cardInfo.id`). */
  number: number;
  createdAt: string;
  updatedAt: string;
  category: CardCategory;
  maskedPan: string;
  name: string;
  balance: Cents;
  deposit: Cents;
  limit: Cents;
  planId: number;
  status: CardStatus;
  currency: string;
  currencyShortName: string;
  binId: string;
  threeDS: boolean;
  /** False while the card carries a temporary provider id. */
  providerReady: boolean;
  address: BillingAddress;
  /** While `processing`: the creation fee held from the wallet for it (not in the spec's card). */
  heldFee?: Cents;
}

export interface SensitiveCardDetails {
  id: string;
  pan: string;
  cvv: string;
  exp: string;
  maskedPan: string;
  name: string;
}

export interface Bin {
  id: string;
  bin: string;
  network: string;
  threeDS: boolean;
  wallet: boolean;
  currency: string;
  country: string;
  initialBalance: Cents;
  enabled: boolean;
}

export interface Plan {
  id: number;
  name: string;
  description: string;
  limit: Cents;
  creationFee: Cents;
  active: boolean;
  createdAt: string;
}

/** What a card creation would cost, before confirming it. */
export interface CreationQuote {
  /** The plan's creation fee, and the fee after the coupon. */
  planFee: Cents;
  fee: Cents;
  walletBalance: Cents;
  /** The wallet after the fee; below zero when the wallet cannot pay it. */
  walletAfter: Cents;
  /** What the BIN puts on the new card. */
  initialBalance: Cents;
}

export interface TopupQuote {
  cardId: string;
  category: CardCategory;
  amount: Cents;
  platformFee: Cents;
  totalCharged: Cents;
  walletBalance: Cents;
  /** How much more the card's plan allows to be deposited. */
  depositAvailable: Cents;
  /** The largest top-up that the plan's limit and the wallet allow now (fee included), at most the top-up maximum. */
  maxAmount: Cents;
  /** Seconds until the card's top-up cooldown has passed; 0 when none. */
  cooldownSeconds: number;
  /** The refusal the top-up would meet now (code, figures, text), from the operation's own checks; absent when it would pass. */
  refusal?: QuotedRefusal;
}

/** What a withdrawal from a card may take now. */
export interface WithdrawalQuote {
  cardId: string;
  cardBalance: Cents;
  /** The card's balance, at most the withdrawal maximum. */
  maxAmount: Cents;
  /** Seconds until the card's withdrawal cooldown has passed; 0 when none. */
  cooldownSeconds: number;
  /** The refusal a withdrawal (of the quoted amount, when one is given) would meet now; absent when it would pass. */
  refusal?: QuotedRefusal;
}

/** A refusal as a quote carries it: plain data, one of the core's coded refusals. */
export type QuotedRefusal = PlainRefusal<ErrorCode, ParamsOf<ErrorCode>>;

export interface TopupResult {
  cardId: string;
  transactionId: string;
  invoiceId: number;
  walletBalance: Cents;
  totalCharged: Cents;
  platformFee: Cents;
  newCardBalance: Cents;
}

export interface WithdrawResult {
  cardId: string;
  transactionId: string;
  invoiceId: number;
  walletBalance: Cents;
  newCardBalance: Cents;
  amountWithdrawn: Cents;
}

export interface CloseResult {
  cardId: string;
  balanceWithdrawn: Cents;
  transactionId: string | null;
  invoiceId: number | null;
  newWalletBalance: Cents;
}

export interface StatusChange {
  cardId: string;
  status: CardStatus;
}

export interface CardTransaction {
  id: string;
  cardId: string;
  cardName: string;
  status: CardTransactionRow['status'];
  side: CardTransactionRow['side'];
  amount: Cents;
  currency: string;
  type: string;
  maskedPan: string;
  merchantName: string;
  originalAmount: Cents;
  originalCurrency: string;
  declineCode: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Page<T> {
  data: T[];
  pagination: { page: number; limit: number; total: number; totalPages: number; hasNext: boolean; hasPrev: boolean };
}

export interface CardOtp {
  id: string;
  code: string;
  amount: Cents;
  currency: string;
  maskedPan: string;
  cardName: string;
  merchantName: string;
  createdAt: string;
}

export interface OtpList {
  otps: CardOtp[];
  cardInfo: { id: number; nickname: string };
}

export interface RequestedOtp {
  message: string;
  cardInfo: { id: string; providerCardId: string; name: string; otpCode: string };
}

export interface Wallet {
  balance: Cents;
  updatedAt: string;
}

export interface Health {
  status: 'healthy';
  environment: string;
  timestamp: string;
}

export type CardWithBalance = CardRow & { balance: number };

/** The columns `toCard` reads (a statement that returns a card names them: `settleCreation`). */
export type CardViewRow = Pick<
  CardWithBalance,
  | 'id'
  | 'number'
  | 'created_at'
  | 'updated_at'
  | 'category'
  | 'masked_pan'
  | 'name'
  | 'balance'
  | 'deposit'
  | 'limit_amount'
  | 'plan_id'
  | 'status'
  | 'currency'
  | 'bin_id'
  | 'three_ds'
  | 'provider_ready'
  | 'address'
>;

export function toCard(row: CardViewRow): Card {
  return {
    id: row.id,
    number: row.number,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    category: row.category,
    maskedPan: row.masked_pan,
    name: row.name,
    balance: Number(row.balance),
    deposit: Number(row.deposit),
    limit: Number(row.limit_amount),
    planId: row.plan_id,
    status: row.status,
    currency: row.currency,
    currencyShortName: row.currency,
    binId: row.bin_id,
    threeDS: Boolean(row.three_ds),
    providerReady: Boolean(row.provider_ready),
    address: JSON.parse(row.address) as BillingAddress,
  };
}

export function toBin(row: BinRow): Bin {
  return {
    id: row.id,
    bin: row.bin,
    network: row.network,
    threeDS: Boolean(row.three_ds),
    wallet: Boolean(row.wallet),
    currency: row.currency,
    country: row.country,
    initialBalance: Number(row.initial_balance),
    enabled: Boolean(row.enabled),
  };
}

export function toPlan(row: PlanRow): Plan {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    limit: Number(row.limit_amount),
    creationFee: Number(row.creation_fee),
    active: Boolean(row.active),
    createdAt: row.created_at,
  };
}

export function toCardTransaction(row: CardTransactionRow & { card_name: string; masked_pan: string }): CardTransaction {
  return {
    id: row.id,
    cardId: row.card_id,
    cardName: row.card_name,
    status: row.status,
    side: row.side,
    amount: Number(row.amount),
    currency: row.currency,
    type: row.type,
    maskedPan: row.masked_pan,
    merchantName: row.merchant_name,
    originalAmount: Number(row.original_amount),
    originalCurrency: row.original_currency,
    declineCode: row.decline_code,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toCardOtp(row: CardOtpRow, card: { name: string; masked_pan: string }): CardOtp {
  return {
    id: row.id,
    code: row.code,
    amount: Number(row.amount),
    currency: row.currency,
    maskedPan: card.masked_pan,
    cardName: card.name,
    merchantName: row.merchant_name,
    createdAt: row.created_at,
  };
}
