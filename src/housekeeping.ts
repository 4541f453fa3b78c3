import type { CoreRuntime } from './compose.js';
import { loggableError } from './log-safe.js';
import type { Logger } from './logger.js';

const EVERY_MS = 10 * 60_000;

/**
 * What every service process does now and then, whether or not it runs the bot: OTP codes past their
 * retention and the outbox's delivered or stale rows are deleted (so the outbox stays bounded when no
 * bot consumes it). Runs at once, then every ten minutes; `stop` waits for a run in progress.
 */
export function startHousekeeping(runtime: Pick<CoreRuntime, 'admin'>, logger: Logger, everyMs = EVERY_MS): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const run = () => {
    running ??= runtime.admin
      .purgeExpired()
      .then((purged) => {
        if (purged.otps + purged.outbox + purged.mailbox > 0) logger.debug({ purged }, 'purged expired OTP codes and outbox rows');
      })
      .catch((error: unknown) => logger.warn({ err: loggableError(error) }, 'housekeeping failed; retrying later'))
      .finally(() => (running = undefined));
  };
  run();
  const timer = setInterval(run, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
