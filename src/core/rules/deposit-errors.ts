import type { DepositStatus } from '../funding/funding-tables.js';
import { DomainRefusal } from './refusal.js';

interface DepositErrorParams {
  REQUEST_NOT_FOUND: { id: number };
  ALREADY_DECIDED: { id: number; status: Exclude<DepositStatus, 'pending'> };
  NOTE_TOO_LONG: { max: number };
  REASON_REQUIRED: Record<string, never>;
  REASON_TOO_LONG: { max: number };
  TOO_MANY_PENDING: { max: number };
  USER_NOT_FOUND: { userId: string };
}

export type DepositErrorCode = keyof DepositErrorParams;

const MESSAGES: { [C in DepositErrorCode]: (p: DepositErrorParams[C]) => string } = {
  REQUEST_NOT_FOUND: (p) => `No deposit request #${p.id}`,
  ALREADY_DECIDED: (p) => `Deposit request #${p.id} is already ${p.status}`,
  NOTE_TOO_LONG: (p) => `A note is at most ${p.max} characters`,
  REASON_REQUIRED: () => 'A rejection needs a reason',
  REASON_TOO_LONG: (p) => `A reason is at most ${p.max} characters`,
  TOO_MANY_PENDING: (p) => `At most ${p.max} deposit requests may wait at once`,
  USER_NOT_FOUND: (p) => `No user with id ${p.userId}`,
};

/**
 * A refusal of a deposit request or its decision, from a closed set of codes; the bot and the command
 * line each turn the code into their own words. Amounts are refused with the core's validation error.
 *
 * @example throw new DepositError('ALREADY_DECIDED', { id: 12, status: 'approved' })
 */
export class DepositError<C extends DepositErrorCode = DepositErrorCode> extends DomainRefusal<C, DepositErrorParams[C]> {
  override readonly name = 'DepositError';

  constructor(code: C, ...params: DepositErrorParams[C] extends Record<string, never> ? [] : [DepositErrorParams[C]]) {
    super(code, params[0], MESSAGES[code] as (p: DepositErrorParams[C]) => string);
  }
}

export function isDepositError(error: unknown): error is DepositError {
  return error instanceof DepositError;
}
