import type { CoreDeps } from '../deps.js';
import { createDepositService } from './deposits.js';
import { createPaymentService } from './payments.js';
import { createStatsService } from '../admin/stats.js';

/** What money coming in from chat needs of the core's dependencies. */
export type FundingDeps = Pick<CoreDeps, 'db' | 'clock' | 'settings'>;

/**
 * Money in from chat and the operator's figures: deposit requests decided by admins, Telegram Payments
 * invoices, and the statistics of `/stats`.
 */
export function createFunding(deps: FundingDeps) {
  return {
    deposits: createDepositService(deps),
    payments: createPaymentService(deps),
    stats: createStatsService(deps),
  };
}

export type Funding = ReturnType<typeof createFunding>;
