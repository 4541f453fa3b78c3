import { CardServiceError, type ValidationIssue } from '../core/rules/errors.js';
import { toCents, type Cents } from '../core/ledger/money.js';

/**
 * A refusal of a remote card service read back into our codes: the spec's section-7 texts (and ours, which
 * extend them in the same voice) with their figures, so the user reads them in their language. Services
 * send these with any HTTP status, so the text decides, never the status.
 */

/** A refusal whose text we do not know: shown to the user as the service wrote it. */
export class RemoteRefusal extends Error {
  override readonly name = 'RemoteRefusal';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

const AMOUNT = String.raw`(-?\d+(?:\.\d+)?)`;

const cents = (text: string): Cents => toCents(Number(text)) ?? Math.round(Number(text) * 100);

type Reader = (match: RegExpExecArray, context: RefusalContext) => CardServiceError;

/** What the request carried, for a figure an earlier text leaves out (the requested withdrawal). */
export interface RefusalContext {
  amount?: Cents;
  /** Seconds from a `Retry-After` header, when the service sent one. */
  retryAfterSeconds?: number;
}

const exact = (text: string, code: ConstructorParameters<typeof CardServiceError>[0]): [RegExp, Reader] => [
  new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.?$`, 'i'),
  () => new (CardServiceError as new (code: string) => CardServiceError)(code),
];

/** Section 7's texts, most specific first. */
const TEXTS: [RegExp, Reader][] = [
  [
    new RegExp(
      `^Insufficient wallet balance\\. Required: ${AMOUNT} \\(topup: ${AMOUNT} \\+ platform fee: ${AMOUNT}\\), Available: ${AMOUNT}`,
      'i',
    ),
    (m) =>
      new CardServiceError('INSUFFICIENT_WALLET_BALANCE', {
        total: cents(m[1]!),
        amount: cents(m[2]!),
        fee: cents(m[3]!),
        available: cents(m[4]!),
      }),
  ],
  [
    new RegExp(`^Insufficient balance\\. Required: ${AMOUNT}`, 'i'),
    (m) => new CardServiceError('INSUFFICIENT_BALANCE', { required: cents(m[1]!) }),
  ],
  [
    new RegExp(`^Topup would exceed card limit\\. Current deposit: ${AMOUNT}, Limit: ${AMOUNT}, Available: ${AMOUNT}`, 'i'),
    (m) => new CardServiceError('CARD_LIMIT_EXCEEDED', { deposit: cents(m[1]!), limit: cents(m[2]!), available: cents(m[3]!) }),
  ],
  [
    /^Please wait (\d+) seconds? before topping up this card again/i,
    (m) => new CardServiceError('TOPUP_COOLDOWN', { seconds: Number(m[1]) }),
  ],
  [
    new RegExp(`^Insufficient card balance\\. Available: ${AMOUNT}(?:, Requested: ${AMOUNT})?`, 'i'),
    (m, context) =>
      new CardServiceError('INSUFFICIENT_CARD_BALANCE', {
        available: cents(m[1]!),
        requested: m[2] === undefined ? (context.amount ?? 0) : cents(m[2]),
      }),
  ],
  [
    /^Please wait (\d+) minutes? between withdrawals/i,
    (m, context) =>
      new CardServiceError('WITHDRAW_COOLDOWN', { minutes: Number(m[1]), seconds: context.retryAfterSeconds ?? Number(m[1]) * 60 }),
  ],
  [
    new RegExp(`^Initial balance of this BIN exceeds the plan limit\\. Initial balance: ${AMOUNT}, Limit: ${AMOUNT}`, 'i'),
    (m) => new CardServiceError('INITIAL_BALANCE_OVER_LIMIT', { initialBalance: cents(m[1]!), limit: cents(m[2]!) }),
  ],
  [/^Invalid coupon: (.+)$/is, (m) => new CardServiceError('INVALID_COUPON', { reason: m[1]! })],
  [/^Failed to (close|freeze|unfreeze|issue|withdraw from) card: (.*)$/is, (m) => providerFailed(m[1]!, m[2]!)],
  exact('Card is not ready for withdrawals', 'CARD_NOT_READY_WITHDRAW'),
  exact('Invalid BIN ID or BIN is disabled', 'INVALID_BIN'),
  exact('Invalid plan ID or plan is inactive', 'INVALID_PLAN'),
  exact('Card not found or access denied', 'CARD_NOT_FOUND'),
  exact('Card ID is required', 'CARD_ID_REQUIRED'),
  exact('Invalid card_id parameter', 'INVALID_CARD_ID_PARAM'),
  exact('Card is already frozen', 'ALREADY_FROZEN'),
  exact('Only active cards can be frozen', 'ONLY_ACTIVE_CAN_FREEZE'),
  exact('Card is not ready for freeze operation', 'CARD_NOT_READY_FREEZE'),
  exact('Only frozen cards can be unfrozen', 'ONLY_FROZEN_CAN_UNFREEZE'),
  exact('Card is not ready for unfreeze operation', 'CARD_NOT_READY_UNFREEZE'),
  exact('Card is already closed', 'ALREADY_CLOSED'),
  exact('Card is closed', 'CARD_CLOSED'),
  exact('Card not ready for closure', 'CARD_NOT_READY_CLOSE'),
  exact('Card is still being issued', 'CARD_PROCESSING'),
  exact('Wallet not found', 'WALLET_NOT_FOUND'),
  exact('No OTP found for this card', 'NO_OTP'),
  exact('Invalid or missing API token', 'INVALID_TOKEN'),
];

function providerFailed(action: string, reason: string): CardServiceError {
  return new CardServiceError('PROVIDER_FAILED', {
    action: action.toLowerCase() as ConstructorParameters<typeof CardServiceError<'PROVIDER_FAILED'>>[1]['action'],
    reason,
  });
}

/** Validation items as the spec shows them; anything else in the array is left out. */
function validationIssues(items: unknown[]): ValidationIssue[] {
  return items.flatMap((item) => {
    if (typeof item !== 'object' || item === null) return [];
    const i = item as Record<string, unknown>;
    if (typeof i.message !== 'string') return [];
    return [
      {
        code: typeof i.code === 'string' ? i.code : 'custom',
        message: i.message,
        path: Array.isArray(i.path) ? i.path.filter((p): p is string | number => typeof p === 'string' || typeof p === 'number') : [],
        ...(typeof i.minimum === 'number' ? { minimum: i.minimum } : {}),
        ...(typeof i.maximum === 'number' ? { maximum: i.maximum } : {}),
      },
    ];
  });
}

/**
 * The refusal in an error envelope: one of ours when its text is known, else a `RemoteRefusal` carrying the
 * service's own words. A 401 is a refused token whatever its text.
 */
export function refusalOf(
  body: { message?: string; error?: string | unknown[] },
  status: number,
  context: RefusalContext = {},
): CardServiceError | RemoteRefusal {
  if (Array.isArray(body.error)) return new CardServiceError('VALIDATION', { issues: validationIssues(body.error) });
  const text = (typeof body.error === 'string' && body.error.trim() !== '' ? body.error : body.message)?.trim() ?? '';
  if (status === 401) return new CardServiceError('INVALID_TOKEN');
  for (const [pattern, read] of TEXTS) {
    const match = pattern.exec(text);
    if (match) return read(match, context);
  }
  return new RemoteRefusal(text === '' ? `The card service refused (HTTP ${status})` : text, status);
}
