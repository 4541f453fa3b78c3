import type { MoneyStore, MoneyStoreDeps } from '../port.js';
import { holdClosure, settleClosure } from './closure.js';
import { holdCreation, settleCreation } from './creation.js';
import { holdWithdrawal, settleWithdrawal, topUp } from './movements.js';

/**
 * The money store on Postgres: each transaction as one statement (data-modifying CTEs, `*-statements.ts`),
 * so one round trip, the rules deciding inside the database by conditional updates that mirror the named
 * checks. `steps`, the portable store, takes the rare cases a statement leaves undone: a caller with stale
 * operations to recover first, a closure whose settling found the operation gone or the card closed.
 */
export function createPostgresMoneyStore(deps: MoneyStoreDeps, steps: MoneyStore): MoneyStore {
  return {
    topUp: (who, cardId, amount, now, hooks) => topUp(deps, who, cardId, amount, now, hooks),
    holdWithdrawal: (request) => holdWithdrawal(deps, steps, request),
    settleWithdrawal: (hold, hooks) => settleWithdrawal(deps, steps, hold, hooks),
    holdClosure: (request) => holdClosure(deps, steps, request),
    settleClosure: (hold) => settleClosure(deps, steps, hold),
    holdCreation: (request) => holdCreation(deps, steps, request),
    settleCreation: (hold, issued, hooks) => settleCreation(deps, hold, issued, hooks),
    // An authorization's hold, clearing and release run the portable steps on Postgres too, each locking the
    // card's row first: about ten round trips a decision (docs/performance.md#authorize). A one-statement form
    // would save round trips one at a time, not the wait of 200 asked at once on the pool, so none is kept.
    holdAuthorization: (request) => steps.holdAuthorization(request),
    clearAuthorization: (request) => steps.clearAuthorization(request),
    releaseAuthorization: (request) => steps.releaseAuthorization(request),
  };
}
