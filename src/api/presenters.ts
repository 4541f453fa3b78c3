import { toAmount, type Cents } from '../core/ledger/money.js';
import type { AutoTopup, CardControls } from '../core/authorization/controls.js';
import type { CardControlsView } from '../core/operations/card-controls.js';
import type {
  Bin,
  Card,
  CardOtp,
  CardTransaction,
  CloseResult,
  Health,
  OtpList,
  Page,
  Plan,
  RequestedOtp,
  SensitiveCardDetails,
  StatusChange,
  TopupQuote,
  TopupResult,
  Wallet,
  WithdrawResult,
} from '../core/operations/views.js';

/**
 * The core's views in the spec's current response shapes: snake_case fields, the spec's odd names
 * (`masked_PAN`, `3ds`, `threeDS`), money from integer cents to JSON numbers with at most 2 decimals.
 */

export const presentHealth = (h: Health) => ({ status: h.status, environment: h.environment, timestamp: h.timestamp });

export const presentBin = (b: Bin) => ({
  id: b.id,
  bin: b.bin,
  network: b.network,
  threeDS: b.threeDS,
  wallet: b.wallet,
  currency: b.currency,
  country: b.country,
  initial_balance: toAmount(b.initialBalance),
});

export const presentPlan = (p: Plan) => ({
  id: p.id,
  name: p.name,
  description: p.description,
  limit: toAmount(p.limit),
  creation_fee: toAmount(p.creationFee),
  created_at: p.createdAt,
});

/** Spec 2.3, current card-detail shape (non-sensitive). */
export const presentCard = (c: Card) => ({
  id: c.id,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
  category: c.category,
  masked_PAN: c.maskedPan,
  name: c.name,
  balance: toAmount(c.balance),
  deposit: toAmount(c.deposit),
  // The spec's earlier creation shape names `Processing` for a card being issued.
  status: c.status === 'processing' ? 'Processing' : c.status,
  currency: c.currency,
  currency_short_name: c.currencyShortName,
  bin_id: c.binId,
  '3ds': c.threeDS,
  type: c.type,
  controls: presentControls(c.controls),
  spent_today: toAmount(c.spentToday),
  spent_this_month: toAmount(c.spentThisMonth),
  auto_topup: presentAutoTopup(c.autoTopup),
});

const limitAmount = (cents: Cents | null) => (cents === null ? null : toAmount(cents));

/** Extension: a card's spending controls; null is none. */
export const presentControls = (c: CardControls) => ({
  per_purchase_limit: limitAmount(c.perPurchaseLimit),
  daily_limit: limitAmount(c.dailyLimit),
  monthly_limit: limitAmount(c.monthlyLimit),
  blocked_categories: c.blockedCategories,
});

/** Extension: `GET`/`PUT /cards/{id}/controls`: the controls and what they bound. */
export const presentControlsView = (v: CardControlsView) => ({
  ...presentControls(v),
  spent_today: toAmount(v.spentToday),
  spent_this_month: toAmount(v.spentThisMonth),
});

/** The interface's earlier `auto_topup`. */
export const presentAutoTopup = (a: AutoTopup) => ({
  enabled: a.enabled,
  min_balance: toAmount(a.minBalance),
  topup_amount: toAmount(a.topupAmount),
  last_triggered: a.lastTriggered,
});

/** Spec 4.10: full card data; never logged. */
export const presentSensitiveDetails = (d: SensitiveCardDetails) => ({
  id: d.id,
  PAN: d.pan,
  CVV: d.cvv,
  EXP: d.exp,
  masked_PAN: d.maskedPan,
  name: d.name,
});

/** Spec 2.3, current card-creation result. */
export const presentCreatedCard = (c: Card) => ({
  id: c.id,
  category: c.category,
  status: c.status,
  balance: toAmount(c.balance),
  address: {
    city: c.address.city,
    line1: c.address.line1,
    line2: c.address.line2,
    state: c.address.state,
    country: c.address.country,
    postalCode: c.address.postalCode,
  },
});

export const presentTopup = (r: TopupResult) => ({
  card_id: r.cardId,
  transaction_id: r.transactionId,
  invoice_id: r.invoiceId,
  wallet_balance: toAmount(r.walletBalance),
  total_charged: toAmount(r.totalCharged),
  platform_fee_amount: toAmount(r.platformFee),
  new_card_balance: toAmount(r.newCardBalance),
});

/** Extension: what a top-up would cost. */
export const presentQuote = (q: TopupQuote) => ({
  card_id: q.cardId,
  category: q.category,
  amount: toAmount(q.amount),
  platform_fee_amount: toAmount(q.platformFee),
  total_charged: toAmount(q.totalCharged),
  wallet_balance: toAmount(q.walletBalance),
  deposit_available: toAmount(q.depositAvailable),
  topup_cooldown_seconds: q.cooldownSeconds,
  max_amount: toAmount(q.maxAmount),
  ...(q.refusal && { refusal: q.refusal.message }),
});

export const presentWithdrawal = (r: WithdrawResult) => ({
  card_id: r.cardId,
  transaction_id: r.transactionId,
  invoice_id: r.invoiceId,
  wallet_balance: toAmount(r.walletBalance),
  new_card_balance: toAmount(r.newCardBalance),
  amount_withdrawn: toAmount(r.amountWithdrawn),
});

export const presentStatusChange = (s: StatusChange) => ({ card_id: s.cardId, status: s.status });

export const presentClose = (r: CloseResult) => ({
  card_id: r.cardId,
  balance_withdrawn: toAmount(r.balanceWithdrawn),
  transaction_id: r.transactionId,
  invoice_id: r.invoiceId,
  new_wallet_balance: toAmount(r.newWalletBalance),
});

export const presentTransaction = (t: CardTransaction) => ({
  id: t.id,
  card_id: t.cardId,
  card_name: t.cardName,
  status: t.status,
  side: t.side,
  amount: toAmount(t.amount),
  currency: t.currency,
  type: t.type,
  masked_pan: t.maskedPan,
  merchant_name: t.merchantName,
  original_amount: toAmount(t.originalAmount),
  original_currency: t.originalCurrency,
  decline_code: t.declineCode,
  transaction_created_at: t.createdAt,
  transaction_updated_at: t.updatedAt,
});

export const presentTransactionPage = (p: Page<CardTransaction>) => ({
  data: p.data.map(presentTransaction),
  pagination: { ...p.pagination },
});

export const presentOtp = (o: CardOtp) => ({
  id: o.id,
  code: o.code,
  amount: toAmount(o.amount),
  currency: o.currency,
  masked_pan: o.maskedPan,
  card_name: o.cardName,
  created_at: o.createdAt,
});

export const presentOtpList = (l: OtpList) => ({
  otps: l.otps.map(presentOtp),
  cardInfo: { id: l.cardInfo.id, nickname: l.cardInfo.nickname },
});

export const presentRequestedOtp = (r: RequestedOtp) => ({
  message: r.message,
  cardInfo: {
    id: r.cardInfo.id,
    providerCardId: r.cardInfo.providerCardId,
    name: r.cardInfo.name,
    otp_code: r.cardInfo.otpCode,
  },
});

export const presentWallet = (w: Wallet) => ({ balance: toAmount(w.balance), updated_at: w.updatedAt });
