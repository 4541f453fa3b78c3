import type { TranslationVariables } from '@grammyjs/i18n';
import {
  ISSUE_BOUNDS,
  isBoundIssue,
  type BoundIssueCode,
  type CardServiceError,
  type ErrorCode,
  type ParamsOf,
  type ValidationIssue,
} from '../card-service/from-core.js';
import { localMoney, type T } from './format.js';

/** How one refusal reads in the chat: its text and the next step (locale keys), and the text's figures. */
interface RefusalText<C extends ErrorCode> {
  key: string;
  hint: string;
  vars?: (p: ParamsOf<C>, t: T) => TranslationVariables;
}

/**
 * Every refusal of the core as chat text in the chat's language (`locales/*.ftl`), with its figures:
 * amounts and times formatted for that language. The compiler checks that every code has a text.
 */
export const REFUSAL_TEXTS: { readonly [C in ErrorCode]: RefusalText<C> } = {
  VALIDATION: {
    key: 'refusal-validation',
    hint: 'hint-validation',
    vars: (p, t) => ({ count: p.issues.length, details: p.issues.map((issue) => validationIssueText(t, issue)).join('; ') }),
  },
  INVALID_TOKEN: { key: 'refusal-invalid-token', hint: 'hint-token' },
  INSUFFICIENT_BALANCE: {
    key: 'refusal-insufficient-balance',
    hint: 'hint-wallet-fee',
    vars: (p) => ({ required: localMoney(p.required) }),
  },
  INSUFFICIENT_WALLET_BALANCE: {
    key: 'refusal-insufficient-wallet-balance',
    hint: 'hint-wallet',
    vars: (p) => ({ total: localMoney(p.total), amount: localMoney(p.amount), fee: localMoney(p.fee), available: localMoney(p.available) }),
  },
  CARD_LIMIT_EXCEEDED: {
    key: 'refusal-card-limit-exceeded',
    hint: 'hint-limit',
    vars: (p) => ({ deposit: localMoney(p.deposit), limit: localMoney(p.limit), available: localMoney(p.available) }),
  },
  TOPUP_COOLDOWN: { key: 'refusal-topup-cooldown', hint: 'hint-cooldown', vars: (p, t) => ({ wait: duration(t, p.seconds) }) },
  INSUFFICIENT_CARD_BALANCE: {
    key: 'refusal-insufficient-card-balance',
    hint: 'hint-card-balance',
    vars: (p) => ({ available: localMoney(p.available), requested: localMoney(p.requested) }),
  },
  WITHDRAW_COOLDOWN: {
    key: 'refusal-withdraw-cooldown',
    hint: 'hint-cooldown',
    vars: (p, t) => ({ minutes: p.minutes, wait: duration(t, p.seconds) }),
  },
  CARD_NOT_READY_WITHDRAW: { key: 'refusal-card-not-ready-withdraw', hint: 'hint-not-ready' },
  INVALID_BIN: { key: 'refusal-invalid-bin', hint: 'hint-catalogue' },
  INVALID_PLAN: { key: 'refusal-invalid-plan', hint: 'hint-catalogue' },
  INITIAL_BALANCE_OVER_LIMIT: {
    key: 'refusal-initial-balance-over-limit',
    hint: 'hint-higher-plan',
    vars: (p) => ({ initialBalance: localMoney(p.initialBalance), limit: localMoney(p.limit) }),
  },
  INVALID_COUPON: {
    key: 'refusal-invalid-coupon',
    hint: 'hint-coupon',
    vars: (p) => ({ reason: COUPON_REASONS[p.reason] ?? 'other', detail: p.reason }),
  },
  CARD_NOT_FOUND: { key: 'refusal-card-not-found', hint: 'hint-card' },
  CARD_ID_REQUIRED: { key: 'refusal-card-id-required', hint: 'hint-card' },
  INVALID_CARD_ID_PARAM: { key: 'refusal-invalid-card-id-param', hint: 'hint-card' },
  CARD_CLOSED: { key: 'refusal-card-closed', hint: 'hint-state' },
  ALREADY_FROZEN: { key: 'refusal-already-frozen', hint: 'hint-state' },
  ONLY_ACTIVE_CAN_FREEZE: { key: 'refusal-only-active-can-freeze', hint: 'hint-state' },
  CARD_NOT_READY_FREEZE: { key: 'refusal-card-not-ready-freeze', hint: 'hint-not-ready' },
  ONLY_FROZEN_CAN_UNFREEZE: { key: 'refusal-only-frozen-can-unfreeze', hint: 'hint-state' },
  CARD_NOT_READY_UNFREEZE: { key: 'refusal-card-not-ready-unfreeze', hint: 'hint-not-ready' },
  ALREADY_CLOSED: { key: 'refusal-already-closed', hint: 'hint-state' },
  CARD_NOT_READY_CLOSE: { key: 'refusal-card-not-ready-close', hint: 'hint-not-ready' },
  CARD_PROCESSING: { key: 'refusal-card-processing', hint: 'hint-not-ready' },
  PROVIDER_FAILED: {
    key: 'refusal-provider-failed',
    hint: 'hint-provider',
    // The provider's own message cannot be translated: it is shown as it came.
    vars: (p) => ({ action: p.action === 'withdraw from' ? 'withdraw' : p.action, reason: p.reason }),
  },
  WALLET_NOT_FOUND: { key: 'refusal-wallet-not-found', hint: 'hint-wallet' },
  NO_OTP: { key: 'refusal-no-otp', hint: 'hint-none' },
  // The service's own words cannot be translated: shown as they came.
  SERVICE_REFUSED: { key: 'refusal-service-refused', hint: 'hint-none', vars: (p) => ({ text: p.text }) },
  SERVICE_UNAVAILABLE: { key: 'refusal-service-unavailable', hint: 'hint-later' },
  OUTCOME_UNKNOWN: { key: 'refusal-outcome-unknown', hint: 'hint-outcome' },
};

/** The core's coupon reasons (English words) as the variants of `refusal-invalid-coupon`; another shows as it came. */
const COUPON_REASONS: Readonly<Record<string, string>> = {
  'coupon not found': 'not-found',
  'coupon is inactive': 'inactive',
  'coupon has expired': 'expired',
  'coupon has no redemptions left': 'used-up',
};

/** Seconds as "2 min 5 s" in the chat's language. */
export function duration(t: T, seconds: number): string {
  const whole = Math.max(0, Math.ceil(seconds));
  return t('duration', { minutes: Math.floor(whole / 60), seconds: whole % 60 });
}

/**
 * A field's bounds in the chat's words: the text at each bound (`ISSUE_BOUNDS`, its figure as `$min` or
 * `$max`) and how the figure reads, when the item does not give it.
 */
const BOUND_TEXTS = new Map<
  string,
  Record<BoundIssueCode, string> & { figure: (bound: number | undefined) => TranslationVariables[string] }
>([
  ['amount', { too_small: 'issue-amount-min', too_big: 'issue-amount-max', figure: (b) => localMoney(Math.round((b ?? 0) * 100)) }],
  ['name', { too_small: 'issue-name-empty', too_big: 'issue-name-long', figure: (b) => b ?? 255 }],
  ['coupon_id', { too_small: 'issue-coupon-empty', too_big: 'issue-coupon-long', figure: (b) => b ?? 64 }],
]);
const BOUND_VARIABLES: Record<BoundIssueCode, string> = { too_small: 'min', too_big: 'max' };

/**
 * One validation item in the chat's language. `field` names what was checked when the item's path does
 * not (a field's schema parsed alone).
 */
export function validationIssueText(t: T, issue: ValidationIssue, field = String(issue.path[0] ?? '')): string {
  const bounds = BOUND_TEXTS.get(field);
  if (bounds && isBoundIssue(issue.code)) {
    return t(bounds[issue.code], { [BOUND_VARIABLES[issue.code]]: bounds.figure(issue[ISSUE_BOUNDS[issue.code]]) });
  }
  switch (`${field}:${issue.code}`) {
    case 'amount:custom':
      return t('issue-amount-decimals');
    case 'amount:invalid_type':
      return t('issue-amount-type');
    case 'name:invalid_type':
      return t('issue-name-empty');
    default:
      return t('issue-other', { field: issue.path.join('.') || field || '—' });
  }
}

/** A refusal as it can be stored in conversation state (plain JSON). */
export interface Refusal {
  code: ErrorCode;
  /** The refusal's figures; absent from one stored by a version before them, shown then in `message`. */
  params?: ParamsOf<ErrorCode>;
  /** The core's English text (the HTTP interface's words). */
  message: string;
}

export function toRefusal(error: CardServiceError): Refusal {
  const detail = error.issues?.map((i) => i.message).join('; ');
  return { code: error.code, params: error.params, message: detail ? `${error.message}: ${detail}` : error.message };
}

/** The refusal alone, in the chat's language, with its figures formatted for it. */
export function refusalMessage(t: T, refusal: Refusal): string {
  if (refusal.params === undefined) return refusal.message;
  const text = REFUSAL_TEXTS[refusal.code] as RefusalText<ErrorCode>;
  return t(text.key, text.vars?.(refusal.params, t));
}

/** The chat text of a refusal: what the service refused, then what to do next. */
export function refusalText(t: T, refusal: Refusal): string {
  const message = refusalMessage(t, refusal);
  const hint = t(REFUSAL_TEXTS[refusal.code].hint).trim();
  return hint ? `${message}. ${hint}` : message;
}

/**
 * A refusal of a card's closure: the withdrawals' cooldown, which closures share, said as the wait before
 * the card can be closed (the service words it as one between withdrawals); any other as `refusalText`.
 * A wait of the whole period is said as "within": a service that words the refusal without the time left
 * (remote mode, no `Retry-After`) is read as the whole period, which is then the most it can be.
 */
export function closeRefusalText(t: T, refusal: Refusal): string {
  if (refusal.code !== 'WITHDRAW_COOLDOWN' || refusal.params === undefined) return refusalText(t, refusal);
  const { minutes, seconds } = refusal.params as ParamsOf<'WITHDRAW_COOLDOWN'>;
  return t('close-cooldown', { minutes, wait: seconds >= minutes * 60 ? 'full' : duration(t, seconds) });
}
