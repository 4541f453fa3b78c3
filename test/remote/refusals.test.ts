import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CardServiceError, type ErrorCode, type ParamsOf } from '../../src/core/rules/errors.js';
import { refusalOf, RemoteRefusal } from '../../src/remote/refusals.js';

/** The bot's own codes for what a remote service did (not a text it sends): nothing to read back. */
type OwnCodes = 'SERVICE_REFUSED' | 'SERVICE_UNAVAILABLE' | 'OUTCOME_UNKNOWN';

/** One refusal of every code a service may send, with figures: the compiler keeps the list complete. */
const SAMPLES: { [C in Exclude<ErrorCode, OwnCodes>]: ParamsOf<C> } = {
  VALIDATION: { issues: [{ code: 'too_small', minimum: 5, message: 'Minimum top-up amount is 5', path: ['amount'] }] },
  INVALID_TOKEN: {},
  INSUFFICIENT_BALANCE: { required: 1_050 },
  INSUFFICIENT_WALLET_BALANCE: { total: 2_160, amount: 2_000, fee: 160, available: 500 },
  CARD_LIMIT_EXCEEDED: { deposit: 90_000, limit: 100_000, available: 10_000 },
  TOPUP_COOLDOWN: { seconds: 87 },
  INSUFFICIENT_CARD_BALANCE: { available: 1_000, requested: 5_001 },
  WITHDRAW_COOLDOWN: { seconds: 600, minutes: 15 },
  CARD_NOT_READY_WITHDRAW: {},
  INVALID_BIN: {},
  INVALID_PLAN: {},
  INVALID_COUPON: { reason: 'it has expired' },
  INITIAL_BALANCE_OVER_LIMIT: { initialBalance: 150_000, limit: 100_000 },
  CARD_NOT_FOUND: {},
  CARD_ID_REQUIRED: {},
  INVALID_CARD_ID_PARAM: {},
  CARD_CLOSED: {},
  ALREADY_FROZEN: {},
  ONLY_ACTIVE_CAN_FREEZE: {},
  CARD_NOT_READY_FREEZE: {},
  ONLY_FROZEN_CAN_UNFREEZE: {},
  CARD_NOT_READY_UNFREEZE: {},
  ALREADY_CLOSED: {},
  CARD_NOT_READY_CLOSE: {},
  CARD_PROCESSING: {},
  PROVIDER_FAILED: { action: 'close', reason: 'the issuer is down' },
  WALLET_NOT_FOUND: {},
  NO_OTP: {},
};

test('every refusal text of ours (the spec section 7 texts among them) reads back into its code and figures', () => {
  for (const [code, params] of Object.entries(SAMPLES) as [ErrorCode, ParamsOf<ErrorCode>][]) {
    const sent = new (CardServiceError as new (code: ErrorCode, params: unknown) => CardServiceError)(code, params);
    const body = code === 'VALIDATION' ? { message: sent.message, error: sent.issues } : { message: sent.message };
    // The seconds of a withdrawal cooldown are not in its text: a Retry-After header carries them.
    const read = refusalOf(body, code === 'INVALID_TOKEN' ? 401 : 400, { retryAfterSeconds: 600 });
    assert.ok(read instanceof CardServiceError, `${code}: ${sent.message}`);
    assert.equal(read.code, code);
    assert.deepEqual({ ...read.params }, { ...params }, code);
  }
});

test('the text decides, in `message` or in `error`, whatever the status', () => {
  const inError = refusalOf({ error: 'No OTP found for this card' }, 404);
  assert.ok(inError instanceof CardServiceError && inError.code === 'NO_OTP');
  const ok200 = refusalOf({ message: 'Please wait 30 seconds before topping up this card again' }, 200);
  assert.ok(ok200 instanceof CardServiceError && ok200.code === 'TOPUP_COOLDOWN');
  // Without Retry-After the whole configured cooldown is the best guess.
  const cooldown = refusalOf({ message: 'Please wait 15 minutes between withdrawals' }, 429);
  assert.ok(cooldown instanceof CardServiceError);
  assert.deepEqual({ ...cooldown.params }, { seconds: 900, minutes: 15 });
});

test('a text we do not know is kept as the service wrote it; a 401 is a refused token whatever it says', () => {
  const unknown = refusalOf({ message: 'Daily limit reached for this merchant' }, 400);
  assert.ok(unknown instanceof RemoteRefusal);
  assert.equal(unknown.message, 'Daily limit reached for this merchant');
  const empty = refusalOf({}, 418);
  assert.ok(empty instanceof RemoteRefusal && empty.message.includes('418'));
  const unauthorized = refusalOf({ message: 'Unauthorized' }, 401);
  assert.ok(unauthorized instanceof CardServiceError && unauthorized.code === 'INVALID_TOKEN');
});
