import type { Logger } from '../logger.js';
import { errorSummary, loggableError } from '../log-safe.js';

/** A background job of the bot (the outbox push, the deletion scheduler). */
export interface Loop {
  /** Look for work now instead of at the next tick. */
  wake(): void;
  stop(): Promise<void>;
}

/** Tells an operator about a failure (the admin chat); must not throw. */
export type Report = (text: string) => Promise<void>;

/**
 * Runs `tick` now and then again after the delay it returns (capped by `intervalMs`), or when woken;
 * `stop` waits for a running tick to finish. A failure is logged each time and reported once per
 * streak, so a lasting fault does not flood the admin chat.
 */
export function startLoop(intervalMs: number, logger: Logger, name: string, report: Report | undefined, tick: () => Promise<number | undefined>): Loop {
  let stopped = false;
  let failing = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;

  const run = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    running = (async () => {
      let delay = intervalMs;
      try {
        const wanted = await tick();
        if (wanted !== undefined) delay = Math.min(intervalMs, wanted);
        failing = false;
      } catch (error) {
        const err = loggableError(error);
        logger.error({ err, loop: name }, 'background loop failed; retrying');
        if (!failing) await report?.(`Bot ${name} loop failed (retrying): ${errorSummary(err)}`);
        failing = true;
      }
      running = undefined;
      if (stopped) return;
      if (again) {
        again = false;
        delay = 0;
      }
      timer = setTimeout(run, delay);
    })();
  };
  run();
  return {
    wake: run,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
