import type { BotMetrics } from '../metrics.js';
import type { Services } from '../services.js';
import { countPendingDeletions } from '../store/pending-deletions.js';
import { oldestUnhandledAt } from './inbox-store.js';

/** The most rows a scrape's look at a table counts: enough to show a backlog, and cheap however long it grows. */
const COUNTED_AT_MOST = 10_000;

/** Points the scrape-time gauges at the bot's database: its outbox (a service without one has none to wait), deletions and inbox. */
export function watchBacklog(s: Services, metrics: BotMetrics): void {
  const { events } = s.cards;
  metrics.watch({
    outboxDepth: async () => (events ? events.waiting(COUNTED_AT_MOST) : 0),
    deletionsPending: () => countPendingDeletions(s.db, COUNTED_AT_MOST),
    inboxLagSeconds: async () => {
      const oldest = await oldestUnhandledAt(s.db, COUNTED_AT_MOST);
      return oldest ? Math.max(0, (s.clock.now().getTime() - oldest.getTime()) / 1000) : 0;
    },
  });
}
