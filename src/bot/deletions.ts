import { GrammyError, type Api } from 'grammy';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../logger.js';
import { startLoop, type Loop, type Report } from './loop.js';
import { dueDeletions, forgetDeletion, nextDeletionDue, type BotDb } from './repository.js';

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
