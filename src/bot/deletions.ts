import { GrammyError, type Api } from 'grammy';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../logger.js';
import { loggableError } from './log-safe.js';
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
export function startDeletionLoop(deps: { api: Api; db: BotDb; clock: Clock; logger: Logger; intervalMs: number }): Loop {
  const { api, db, clock, logger } = deps;
  return startLoop(deps.intervalMs, logger, 'deletion', async () => {
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

/**
 * Runs `tick` now and then again after the delay it returns (capped by `intervalMs`), or when woken;
 * `stop` waits for a running tick to finish.
 */
export function startLoop(intervalMs: number, logger: Logger, name: string, tick: () => Promise<number | undefined>): Loop {
  let stopped = false;
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
      } catch (error) {
        logger.error({ err: loggableError(error), loop: name }, 'background loop failed; retrying');
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
