import type { Logger } from './logger.js';
import { errorSummary, loggableError } from './log-safe.js';

/**
 * A background job: the bot's (the outbox push, the deletion scheduler, the inbox sweep, remote mode's
 * watch) and every service process's (housekeeping, the Idempotency-Key purge).
 */
export interface Loop {
  /** Look for work now instead of at the next tick (not while failing: the back-off holds). */
  wake(): void;
  stop(): Promise<void>;
}

/** Tells an operator about a failure (the bot's admin chat); must not throw. */
export type Report = (text: string) => Promise<void>;

export interface LoopOptions {
  /** Longest wait between failing ticks (30 s by default). */
  maxBackoffMs?: number;
  /** Lets the process exit while the loop waits for its next tick (for the loops of a process that runs other things). */
  unref?: boolean;
  /** Runs the first tick after `intervalMs` instead of at once. */
  later?: boolean;
}

const MAX_BACKOFF_MS = 30_000;

/**
 * Runs `tick` now (or after `intervalMs`, `later`) and then again after the delay it returns (capped by `intervalMs`), or when woken;
 * `stop` waits for a running tick to finish. A failing tick is retried after a delay that doubles with
 * each failure in a row (from twice `intervalMs`, up to `maxBackoffMs`), so an outage (the database,
 * Telegram) is not hammered. A streak of failures is logged once when it starts (with the error, and
 * reported to the operator once) and once when it ends ("recovered after N failures"); the failures in
 * between are logged at debug.
 */
export function startLoop(
  intervalMs: number,
  logger: Logger,
  name: string,
  report: Report | undefined,
  tick: () => Promise<number | undefined>,
  options: LoopOptions = {},
): Loop {
  const maxBackoffMs = options.maxBackoffMs ?? MAX_BACKOFF_MS;
  let stopped = false;
  let failures = 0;
  let failingSince = 0;
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
        if (failures > 0) {
          const seconds = Math.round((Date.now() - failingSince) / 100) / 10;
          logger.info({ loop: name, failures, seconds }, `background loop recovered after ${failures} failures / ${seconds} s`);
          failures = 0;
        }
      } catch (error) {
        failures++;
        if (failures === 1) {
          failingSince = Date.now();
          const err = loggableError(error);
          logger.error({ err, loop: name }, 'background loop failed; retrying with back-off');
          await report?.(`Bot ${name} loop failed (retrying): ${errorSummary(err)}`);
        } else if (logger.isLevelEnabled('debug')) {
          logger.debug({ err: loggableError(error), loop: name, failures }, 'background loop still failing');
        }
        delay = Math.min(maxBackoffMs, Math.max(1, intervalMs) * 2 ** Math.min(failures, 30));
      }
      running = undefined;
      if (stopped) return;
      // A wake during the tick runs it again at once, unless it failed: then the back-off holds.
      if (again && failures === 0) delay = 0;
      again = false;
      timer = setTimeout(run, delay);
      if (options.unref) timer.unref();
    })();
  };
  if (options.later) {
    timer = setTimeout(run, intervalMs);
    if (options.unref) timer.unref();
  } else run();
  return {
    wake: () => {
      if (failures === 0) run();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
