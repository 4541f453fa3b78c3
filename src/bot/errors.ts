import type { CardServiceError, ErrorCode } from '../core/errors.js';

/**
 * What to do next after each refusal, as a locale key. The refusal itself is shown in the service's
 * own words (`err.message`); the compiler checks that every code has a hint.
 */
export const REFUSAL_HINTS: Record<ErrorCode, string> = {
  VALIDATION: 'hint-validation',
  INVALID_TOKEN: 'hint-token',
  INSUFFICIENT_BALANCE: 'hint-wallet',
  INSUFFICIENT_WALLET_BALANCE: 'hint-wallet',
  CARD_LIMIT_EXCEEDED: 'hint-limit',
  TOPUP_COOLDOWN: 'hint-cooldown',
  INSUFFICIENT_CARD_BALANCE: 'hint-card-balance',
  WITHDRAW_COOLDOWN: 'hint-cooldown',
  CARD_NOT_READY_WITHDRAW: 'hint-not-ready',
  INVALID_BIN: 'hint-catalogue',
  INVALID_PLAN: 'hint-catalogue',
  INVALID_COUPON: 'hint-coupon',
  CARD_NOT_FOUND: 'hint-card',
  CARD_ID_REQUIRED: 'hint-card',
  INVALID_CARD_ID_PARAM: 'hint-card',
  CARD_CLOSED: 'hint-state',
  ALREADY_FROZEN: 'hint-state',
  ONLY_ACTIVE_CAN_FREEZE: 'hint-state',
  CARD_NOT_READY_FREEZE: 'hint-not-ready',
  ONLY_FROZEN_CAN_UNFREEZE: 'hint-state',
  CARD_NOT_READY_UNFREEZE: 'hint-not-ready',
  ALREADY_CLOSED: 'hint-state',
  CARD_NOT_READY_CLOSE: 'hint-not-ready',
  PROVIDER_FAILED: 'hint-provider',
  WALLET_NOT_FOUND: 'hint-wallet',
  NO_OTP: 'hint-none',
};

/** A refusal as it can be stored in conversation state (plain JSON). */
export interface Refusal {
  code: ErrorCode;
  message: string;
}

export function toRefusal(error: CardServiceError): Refusal {
  const detail = error.issues?.map((i) => i.message).join('; ');
  return { code: error.code, message: detail ? `${error.message}: ${detail}` : error.message };
}

/** The chat text of a refusal: the service's words, then what to do next. */
export function refusalText(t: (key: string) => string, refusal: Refusal): string {
  const hint = t(REFUSAL_HINTS[refusal.code]).trim();
  return hint ? `${refusal.message}. ${hint}` : refusal.message;
}
