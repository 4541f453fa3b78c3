import { newClaimant } from '../../db/claims.js';
import type { CardsBot } from '../runtime/cards-bot.js';
import { adminReporter } from '../runtime/error-boundary.js';
import { startDeletionLoop } from './deletions.js';
import { startOutboxLoop } from './outbox.js';

/** The running background jobs of a bot. */
export interface BackgroundJobs {
  /** Settles once pushes are woken by events committed in other processes too (Postgres); at once otherwise. */
  listening: Promise<void>;
  stop(): Promise<void>;
}

/**
 * The outbox push and the deletion scheduler; needed in both polling and webhook mode. Any number of
 * bot processes may run them over one database: they claim the rows they work on. The push runs as
 * soon as events are committed (`wakeOnCommit`, true by default), and polls as well.
 */
export function startBackgroundJobs(bot: CardsBot, options: { wakeOnCommit?: boolean } = {}): BackgroundJobs {
  const s = bot.services;
  const report = adminReporter(bot.api, s);
  // Who this instance is when it claims work; its loops work through tables of their own.
  const claimant = newClaimant(s.clock);
  const deletions = startDeletionLoop({
    api: bot.api,
    db: s.db,
    clock: s.clock,
    logger: s.logger,
    i18n: s.i18n,
    intervalMs: s.config.pollIntervalMs ?? 500,
    report,
    claimant,
  });
  s.wakeDeletions = deletions.wake;
  const outbox = startOutboxLoop(s, bot.api, report, claimant);
  const committed = options.wakeOnCommit === false ? undefined : s.cards.events?.onCommitted(outbox.wake);
  return {
    listening: committed?.ready ?? Promise.resolve(),
    async stop() {
      await committed?.close();
      await Promise.all([outbox.stop(), deletions.stop()]);
    },
  };
}
