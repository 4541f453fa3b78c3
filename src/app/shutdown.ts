import { loggableError } from '../infra/log-safe.js';
import type { Logger } from '../infra/logger.js';

const SHUTDOWN_LIMIT_MS = 15_000;

/**
 * The one shutdown path of a process: on SIGINT or SIGTERM, `stop` finishes the work in flight and
 * closes what is open, then the process exits (1 if that fails or takes longer than 15 s).
 */
export function stopOnSignals(stop: () => Promise<void>, logger: Logger): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
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
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}
