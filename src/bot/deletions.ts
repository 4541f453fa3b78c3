import { GrammyError, type Api } from 'grammy';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../logger.js';
import { loggableError } from '../log-safe.js';
import { dueDeletions, forgetDeletion, nextDeletionDue, type BotDb } from './repository.js';

export interface Loop {
  /** Look for work now instead of at the next tick. */
  wake(): void;
  stop(): Promise<void>;
}

/**
 * Deletes messages when due. The schedule lives in `bot_pending_deletions`, so a message sent
 * before a restart is still deleted on time after it (or at once, if it fell due meanwhile).
 */
export function startDeletionLoop(deps: { api: Api; db: BotDb; clock: Clock; logger: Logger; intervalMs: number; report?: Report }): Loop {
  const { api, db, clock, logger } = deps;
  return startLoop(deps.intervalMs, logger, 'deletion', deps.report, async () => {
    for (const due of await dueDeletions(db, clock.now())) {
      try {
        await api.deleteMessage(due.chatId, due.messageId);
      } catch (error) {
        // Already gone, or too old to delete: nothing more can be done, so it is forgotten.
        if (!(error instanceof GrammyError)) throw error;
        logger.warn({ chatId: due.chatId, messageId: due.messageId, description: error.description }, 'scheduled deletion failed');
      }
      await forgetDeletion(db, due.chatId, due.messageId);
    }
    const next = await nextDeletionDue(db);
    return next ? Math.max(0, next.getTime() - clock.now().getTime()) : undefined;
  });
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
        if (!failing) await report?.(`Bot ${name} loop failed (retrying): ${String(err.type)}: ${String(err.message ?? err.description)}`);
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
