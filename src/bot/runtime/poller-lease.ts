import { randomUUID } from 'node:crypto';
import type { Clock } from '../card-service/from-core.js';
import { keepRenewed, leasesOn } from '../../db/lease.js';
import { loggableError } from '../../infra/log-safe.js';
import type { Logger } from '../../infra/logger.js';
import type { BotDb } from '../store/tables.js';

const KEY = 'bot:poller';

/** Another live process polls Telegram for this bot over the same database. */
export class PollerTakenError extends Error {
  override readonly name = 'PollerTakenError';
}

/**
 * Telegram lets one consumer long-poll a bot; a second one steals its updates and both fail. Polling
 * holds a lease in `bot_kv`, renewed every third of `leaseMs`: a second process on the same database
 * waits for the lease to lapse (a crashed poller's does) and is refused if its holder is still alive.
 * The lease (`src/db/lease.ts`) keeps the columns of the `bot_kv` row it shipped with: `value` names its
 * holder, `updated_at` when it was last taken or renewed. Taking it is one conditional statement, so two
 * processes starting together cannot both win.
 */
export async function takePollingLease(db: BotDb, clock: Clock, logger: Logger, leaseMs = 30_000): Promise<{ release(): Promise<void> }> {
  const me = randomUUID();
  const lease = leasesOn({ table: 'bot_kv', key: ['key'], columns: { holder: 'value', until: 'updated_at', stamped: true }, leaseMs });
  const row = { key: KEY };
  /** Renews the lease if ours, else takes it if free or lapsed. */
  const take = async (): Promise<boolean> => {
    const now = clock.now();
    return (
      (await lease.renew(db, row, { holder: me }, now)) !== undefined || (await lease.take(db, row, me, now, { insert: {} })) !== undefined
    );
  };

  const deadline = Date.now() + leaseMs + leaseMs / 3;
  let told = false;
  while (!(await take())) {
    if (!told) {
      // Said at once: a restart after a crash waits out the dead poller's lease, which would otherwise look like a hang.
      logger.info(
        { waitSeconds: Math.ceil((deadline - Date.now()) / 1000) },
        'another process holds the polling lease (or held it when it stopped); waiting for it to lapse',
      );
      told = true;
    }
    if (Date.now() >= deadline) {
      throw new PollerTakenError(
        'Another process is polling Telegram for this bot over the same database (Telegram allows one). Stop it, ' +
          'or run several instances with BOT_MODE=webhook, or this one with BOT_ENABLED=false (the API alone).',
      );
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, leaseMs / 3)));
  }

  const renewal = keepRenewed(take, leaseMs / 3, {
    lost: () => logger.error('the polling lease was taken by another process'),
    failed: (error) => logger.warn({ err: loggableError(error) }, 'could not renew the polling lease'),
  });
  return {
    async release() {
      renewal.stop();
      await lease.release(db, row, { holder: me }, { remove: true });
    },
  };
}
