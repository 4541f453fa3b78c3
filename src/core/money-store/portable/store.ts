import type { MoneyStore, MoneyStoreDeps } from '../port.js';
import { holdAuthorization } from './authorization.js';
import { clearAuthorization, releaseAuthorization } from './authorization-clearing.js';
import { holdClosure, settleClosure } from './closure.js';
import { holdCreation, settleCreation } from './creation.js';
import { holdWithdrawal, settleWithdrawal, topUp } from './movements.js';

/**
 * The money store in Kysely's steps, a statement per step inside each transaction: runs on SQLite and
 * Postgres alike (the Postgres store falls back to it in the rare cases its statements leave to it).
 */
export function createPortableMoneyStore(deps: MoneyStoreDeps): MoneyStore {
  return {
    topUp: (who, cardId, amount, now, hooks) => topUp(deps, who, cardId, amount, now, hooks),
    holdWithdrawal: (request) => holdWithdrawal(deps, request),
    settleWithdrawal: (hold, hooks) => settleWithdrawal(deps, hold, hooks),
    holdClosure: (request) => holdClosure(deps, request),
    settleClosure: (hold) => settleClosure(deps, hold),
    holdCreation: (request) => holdCreation(deps, request),
    settleCreation: (hold, issued, hooks) => settleCreation(deps, hold, issued, hooks),
    holdAuthorization: (request) => holdAuthorization(deps, request),
    clearAuthorization: (request) => clearAuthorization(deps, request),
    releaseAuthorization: (request) => releaseAuthorization(deps, request),
  };
}
