import type { CoreDeps } from '../deps.js';
import { checkLedger } from '../ledger/ledger.js';
import { createRetention } from '../retention.js';
import { createCardOwners } from './card-owner.js';
import { createCatalogue } from './catalogue.js';
import { createPeople } from './people.js';
import { createSandbox } from './sandbox.js';
import { createSandboxChallenges } from './sandbox-challenges.js';
import { createPendingOperations } from '../operations/pending-operations.js';

export { AdminError } from './errors.js';
export type { CardHold } from './card-holds.js';
export { CARD_NETWORKS, type NewBin, type NewCoupon, type NewPlan } from './catalogue.js';
export type { CardRecord } from './people.js';
export type { ChatLinkRecord, TokenRecord } from './tokens.js';
export type { SimulatedTransaction } from './sandbox.js';
export type { Simulated3ds } from './sandbox-challenges.js';

/** What an operator does: users, tokens, funding, catalogue, fees, coupons, sandbox simulations, checks. */
export function createAdminService(deps: CoreDeps) {
  const retention = createRetention(deps);
  const pending = createPendingOperations(deps.db, deps.clock, undefined, { provider: deps.provider, cipher: deps.cipher });
  return {
    ...createCatalogue(deps),
    ...createPeople(deps),
    ...createSandbox(deps),
    ...createCardOwners(deps),
    ...createSandboxChallenges(deps),

    checkLedger: () => checkLedger(deps.db),

    /** Deletes OTP codes past their retention and the outbox's delivered or stale rows. */
    purgeExpired: () => retention.purge(),

    /**
     * Settles the operations a crash left waiting on the card provider for longer than `graceMs` (the
     * pending grace by default), asking a provider that remembers (Lithic) what became of them first.
     */
    recoverInterrupted: (graceMs?: number) => pending.recover(graceMs),

    /** `recoverInterrupted` without asking the provider: what it must be asked about waits for the housekeeping. */
    recoverUnasked: () => pending.recoverUnasked(),
  };
}

export type AdminService = ReturnType<typeof createAdminService>;
