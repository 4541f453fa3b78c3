import { constants } from 'node:os';
import { loggableError } from '../infra/log-safe.js';
import type { Logger } from '../infra/logger.js';

const SHUTDOWN_LIMIT_MS = 15_000;
/** The signal that forces the exit mid-shutdown: the first stops, the second is ignored, the third forces. */
const FORCING_SIGNAL = 3;

/**
 * The one shutdown path of a process: on SIGINT or SIGTERM, `stop` finishes the work in flight and
 * closes what is open, then the process exits (1 if that fails or takes longer than 15 s).
 *
 * A second signal during the shutdown is ignored: Ctrl-C on `npm start` delivers SIGINT twice (the
 * terminal signals the whole process group and npm forwards it to its child), and so does a service
 * manager that signals the whole group. Dying on it would leave the polling lease held, and the next
 * start waiting 30 s for it to lapse. A third signal forces the exit, and says so.
 */
export function stopOnSignals(stop: () => Promise<void>, logger: Logger): void {
  let received = 0;
  const shutdown = async (signal: NodeJS.Signals) => {
    received += 1;
    if (received === FORCING_SIGNAL) {
      logger.error({ signal }, 'Third signal during the shutdown: exiting now, without finishing the work in flight');
      process.exit(128 + constants.signals[signal]);
    }
    if (received > 1) {
      logger.warn({ signal }, 'Already shutting down; a third signal forces the exit');
      return;
    }
    logger.info({ signal }, 'Shutting down: finishing the work in flight');
    const limit = setTimeout(() => {
      logger.error({ limitMs: SHUTDOWN_LIMIT_MS }, 'Shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS);
    limit.unref();
    try {
      await stop();
      logger.info('Stopped');
      process.exit(0);
    } catch (error) {
      logger.error({ err: loggableError(error) }, 'Shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}
