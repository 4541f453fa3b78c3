import { formatAmount, type Cents } from '../ledger/money.js';
import { ProviderError } from '../provider/provider.js';
import { DomainRefusal } from './refusal.js';

/** One item of a validation error, in the spec's shape (section 7). */
export interface ValidationIssue {
  code: string;
  minimum?: number;
  maximum?: number;
  type?: string;
  inclusive?: boolean;
  exact?: boolean;
  message: string;
  path: (string | number)[];
}

interface ErrorParams {
  VALIDATION: { issues: ValidationIssue[] };
  INVALID_TOKEN: Record<string, never>;
  INSUFFICIENT_BALANCE: { required: Cents };
  INSUFFICIENT_WALLET_BALANCE: { total: Cents; amount: Cents; fee: Cents; available: Cents };
  CARD_LIMIT_EXCEEDED: { deposit: Cents; limit: Cents; available: Cents };
  TOPUP_COOLDOWN: { seconds: number };
  INSUFFICIENT_CARD_BALANCE: { available: Cents; requested: Cents };
  /** `seconds` left before the next attempt; `minutes` the configured cooldown (15 by default). */
  WITHDRAW_COOLDOWN: { seconds: number; minutes: number };
  CARD_NOT_READY_WITHDRAW: Record<string, never>;
  INVALID_BIN: Record<string, never>;
  INVALID_PLAN: Record<string, never>;
  /** The BIN's initial balance is above the plan's limit: no card can be created from the pair. */
  INITIAL_BALANCE_OVER_LIMIT: { initialBalance: Cents; limit: Cents };
  INVALID_COUPON: { reason: string };
  CARD_NOT_FOUND: Record<string, never>;
  CARD_ID_REQUIRED: Record<string, never>;
  INVALID_CARD_ID_PARAM: Record<string, never>;
  CARD_CLOSED: Record<string, never>;
  ALREADY_FROZEN: Record<string, never>;
  ONLY_ACTIVE_CAN_FREEZE: Record<string, never>;
  CARD_NOT_READY_FREEZE: Record<string, never>;
  ONLY_FROZEN_CAN_UNFREEZE: Record<string, never>;
  CARD_NOT_READY_UNFREEZE: Record<string, never>;
  ALREADY_CLOSED: Record<string, never>;
  CARD_NOT_READY_CLOSE: Record<string, never>;
  /** A top-up or the card data of a card in `processing` (its creation waits on the provider). */
  CARD_PROCESSING: Record<string, never>;
  /** The card provider refused; `action` reads as in `Failed to close card: …`. */
  PROVIDER_FAILED: { action: 'issue' | 'freeze' | 'unfreeze' | 'close' | 'withdraw from' | 'read'; reason: string };
  WALLET_NOT_FOUND: Record<string, never>;
  NO_OTP: Record<string, never>;
  /** Remote mode: a refusal in words the bot does not know, shown as the card service wrote them. */
  SERVICE_REFUSED: { text: string };
  /** Remote mode: the card service did not answer (down, too slow, 5xx). Nothing is known to have happened. */
  SERVICE_UNAVAILABLE: Record<string, never>;
  /** Remote mode: a money movement was sent and no answer came back: whether it was done is not known yet. */
  OUTCOME_UNKNOWN: Record<string, never>;
}

export type ErrorCode = keyof ErrorParams;
export type ParamsOf<C extends ErrorCode> = ErrorParams[C];

const a = formatAmount;

/** The spec's texts (section 7) word for word; the others are ours, in the same voice. */
const MESSAGES: { [C in ErrorCode]: (p: ErrorParams[C]) => string } = {
  VALIDATION: () => 'Invalid input data',
  INVALID_TOKEN: () => 'Invalid or missing API token',
  INSUFFICIENT_BALANCE: (p) => `Insufficient balance. Required: ${a(p.required)}`,
  INSUFFICIENT_WALLET_BALANCE: (p) =>
    `Insufficient wallet balance. Required: ${a(p.total)} (topup: ${a(p.amount)} + platform fee: ${a(p.fee)}), Available: ${a(p.available)}`,
  CARD_LIMIT_EXCEEDED: (p) =>
    `Topup would exceed card limit. Current deposit: ${a(p.deposit)}, Limit: ${a(p.limit)}, Available: ${a(p.available)}`,
  TOPUP_COOLDOWN: (p) => `Please wait ${p.seconds} seconds before topping up this card again`,
  INSUFFICIENT_CARD_BALANCE: (p) => `Insufficient card balance. Available: ${a(p.available)}, Requested: ${a(p.requested)}`,
  WITHDRAW_COOLDOWN: (p) => `Please wait ${p.minutes} minutes between withdrawals`,
  CARD_NOT_READY_WITHDRAW: () => 'Card is not ready for withdrawals',
  INVALID_BIN: () => 'Invalid BIN ID or BIN is disabled',
  INVALID_PLAN: () => 'Invalid plan ID or plan is inactive',
  INITIAL_BALANCE_OVER_LIMIT: (p) =>
    `Initial balance of this BIN exceeds the plan limit. Initial balance: ${a(p.initialBalance)}, Limit: ${a(p.limit)}`,
  INVALID_COUPON: (p) => `Invalid coupon: ${p.reason}`,
  CARD_NOT_FOUND: () => 'Card not found or access denied',
  CARD_ID_REQUIRED: () => 'Card ID is required',
  INVALID_CARD_ID_PARAM: () => 'Invalid card_id parameter',
  CARD_CLOSED: () => 'Card is closed',
  ALREADY_FROZEN: () => 'Card is already frozen',
  ONLY_ACTIVE_CAN_FREEZE: () => 'Only active cards can be frozen',
  CARD_NOT_READY_FREEZE: () => 'Card is not ready for freeze operation',
  ONLY_FROZEN_CAN_UNFREEZE: () => 'Only frozen cards can be unfrozen',
  CARD_NOT_READY_UNFREEZE: () => 'Card is not ready for unfreeze operation',
  ALREADY_CLOSED: () => 'Card is already closed',
  CARD_NOT_READY_CLOSE: () => 'Card not ready for closure',
  CARD_PROCESSING: () => 'Card is still being issued',
  PROVIDER_FAILED: (p) => `Failed to ${p.action} card: ${p.reason}`,
  WALLET_NOT_FOUND: () => 'Wallet not found',
  NO_OTP: () => 'No OTP found for this card',
  SERVICE_REFUSED: (p) => p.text,
  SERVICE_UNAVAILABLE: () => 'The card service is not answering',
  OUTCOME_UNKNOWN: () => 'The card service did not answer in time: whether it was done is not known yet',
};

/**
 * The one error the core raises for a refusal. `code` is from a closed set; edges map it to an HTTP
 * status or a chat text with tables the compiler checks for completeness.
 *
 * @example throw new CardServiceError('TOPUP_COOLDOWN', { seconds: 42 })
 */
export class CardServiceError<C extends ErrorCode = ErrorCode> extends DomainRefusal<C, ErrorParams[C]> {
  override readonly name = 'CardServiceError';

  constructor(code: C, ...params: ErrorParams[C] extends Record<string, never> ? [] : [ErrorParams[C]]) {
    super(code, params[0], MESSAGES[code] as (p: ErrorParams[C]) => string);
  }

  /** Validation items, when this is a validation error. */
  get issues(): ValidationIssue[] | undefined {
    return this.code === 'VALIDATION' ? (this.params as ErrorParams['VALIDATION']).issues : undefined;
  }

  /** Seconds until a cooldown ends, for a `Retry-After` header. */
  get retryAfterSeconds(): number | undefined {
    if (this.code === 'TOPUP_COOLDOWN' || this.code === 'WITHDRAW_COOLDOWN') {
      return (this.params as { seconds: number }).seconds;
    }
    return undefined;
  }
}

export function isCardServiceError(error: unknown): error is CardServiceError {
  return error instanceof CardServiceError;
}

/**
 * Runs a call to the card provider: a provider that refuses or fails is the refusal
 * `Failed to <action> card: <provider message>`.
 *
 * @example await callProvider('freeze', () => provider.freeze(card.provider_card_id))
 */
export async function callProvider<T>(action: ErrorParams['PROVIDER_FAILED']['action'], call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof ProviderError) throw new CardServiceError('PROVIDER_FAILED', { action, reason: error.message });
    throw error;
  }
}
