import type { I18n } from '@grammyjs/i18n';
import { GrammyError, type Api } from 'grammy';
import type { Clock } from '../card-service/from-core.js';
import type { Claimant } from '../../db/claims.js';
import { loggableError } from '../../infra/log-safe.js';
import type { Logger } from '../../infra/logger.js';
import type { BotContext } from '../context.js';
import { startLoop, type Loop, type Report } from '../../infra/loop.js';
import { chatLocaleKey } from '../store/kv-keys.js';
import { claimDueDeletions, forgetDeletion, nextDeletionDue } from '../store/pending-deletions.js';
import { readKv } from '../store/kv.js';
import type { BotDb } from '../store/tables.js';

interface DeletionDeps {
  api: Api;
  db: BotDb;
  clock: Clock;
  logger: Logger;
  i18n: I18n<BotContext>;
  intervalMs: number;
  report?: Report;
  /** Who this process is when it claims deletions (several processes may share the database). */
  claimant: Claimant;
}

/**
 * Deletes messages when due. The schedule lives in `bot_pending_deletions`, so a message sent before a
 * restart is still deleted on time after it (or at once, if it fell due meanwhile). Several processes
 * share the schedule: each claims the deletions it carries out, so a message is deleted once; one
 * whose process died holding it is taken over when its claim lapses. A deletion Telegram refuses is
 * forgotten and the chat asked to delete the message by hand: once per chat per tick, in a reply to the
 * first such message, so never twice for one message.
 */
export function startDeletionLoop(deps: DeletionDeps): Loop {
  const { api, db, clock, logger } = deps;
  return startLoop(deps.intervalMs, logger, 'deletion', deps.report, async () => {
    const undeleted = new Map<number, number[]>();
    const claim = await claimDueDeletions(db, deps.claimant);
    try {
      for (const due of claim.items) {
        if (!(await claim.holds(due))) continue;
        const failure = await deleteNow(api, due.chatId, due.messageId);
        await forgetDeletion(db, due.chatId, due.messageId);
        if (!failure) continue;
        const fields = { chatId: due.chatId, messageId: due.messageId, err: loggableError(failure.error) };
        if (failure.kind === 'gone') logger.debug(fields, 'scheduled deletion: the message was gone already');
        else if (failure.kind === 'unreachable') logger.warn(fields, 'scheduled deletion failed; the chat cannot be reached');
        else {
          logger.warn(fields, 'scheduled deletion failed; the chat is asked to delete the message by hand');
          undeleted.set(due.chatId, [...(undeleted.get(due.chatId) ?? []), due.messageId]);
        }
      }
    } catch (error) {
      // What is left is tried again after the back-off, here or by another process, not after the lease.
      await claim.release().catch(() => undefined);
      throw error;
    } finally {
      // Also after a failure that stops the tick: those deletions are forgotten already.
      for (const [chatId, messageIds] of undeleted) await askToDeleteByHand(deps, chatId, messageIds);
    }
    const next = await nextDeletionDue(db, clock.now());
    return next ? Math.max(0, next.getTime() - clock.now().getTime()) : undefined;
  });
}

type Failure = { kind: 'gone' | 'unreachable' | 'refused'; error: GrammyError };

/**
 * Deletes one message; a refusal comes back as what it means. Gone already (the user deleted it);
 * unreachable (the bot was blocked, the chat is gone: nobody to tell); anything else refused (too old,
 * no rights), to be deleted by hand. Throws what may pass, so the deletion stays due and is tried again:
 * flood waits, Telegram's own failures, a bad bot token, the network.
 */
async function deleteNow(api: Api, chatId: number, messageId: number): Promise<Failure | undefined> {
  try {
    await api.deleteMessage(chatId, messageId);
    return undefined;
  } catch (error) {
    if (!(error instanceof GrammyError)) throw error;
    const code = error.error_code;
    if (code === 429 || code >= 500 || code === 401 || code === 404) throw error;
    const description = error.description.toLowerCase();
    if (description.includes('message to delete not found') || description.includes('message_id_invalid')) return { kind: 'gone', error };
    if (code === 403 || description.includes('chat not found') || description.includes('peer_id_invalid'))
      return { kind: 'unreachable', error };
    return { kind: 'refused', error };
  }
}

/** Tells a chat, in the language it was linked in, that messages could not be deleted; a failure is only logged. */
async function askToDeleteByHand(deps: DeletionDeps, chatId: number, messageIds: number[]): Promise<void> {
  try {
    const locale = (await readKv(deps.db, chatLocaleKey(chatId))) ?? 'en';
    const text = deps.i18n.t(locale, 'deletion-failed', { count: messageIds.length });
    await deps.api.sendMessage(chatId, text, { reply_parameters: { message_id: messageIds[0]!, allow_sending_without_reply: true } });
  } catch (error) {
    deps.logger.warn({ chatId, err: loggableError(error) }, 'could not ask a chat to delete messages by hand');
  }
}
