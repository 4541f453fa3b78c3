import { setTimeout as sleep } from 'node:timers/promises';
import { type Api, GrammyError } from 'grammy';
import type { Update } from 'grammy/types';
import { loggableError } from '../../infra/log-safe.js';
import type { Logger } from '../../infra/logger.js';
import type { Inbox } from './inbox.js';

export interface DurablePollingOptions {
  api: Api;
  inbox: Pick<Inbox, 'receiveAll'>;
  logger: Logger;
  allowedUpdates: readonly string[];
  /** The long poll's timeout, in seconds. 30 by default. */
  timeoutSeconds?: number;
  /** The longest wait between two failed polls. 30 s by default. */
  maxBackoffMs?: number;
}

export interface DurablePolling {
  /** Stops fetching (the poll in flight is cancelled); the batch in hand is stored first. */
  stop(): Promise<void>;
}

/** Telegram refused the poll for good: the token is wrong (401), or another consumer polls or a webhook is set (409). */
const isFatal = (error: unknown) => error instanceof GrammyError && (error.error_code === 401 || error.error_code === 409);

/**
 * Long polling that loses nothing to a crash: each fetched batch is stored in the inbox (one commit)
 * before the next `getUpdates` confirms it to Telegram (its `offset`), and handled from there, as webhook
 * updates are. @grammyjs/runner confirms a batch as soon as it is fetched, so a payment being handled
 * when the process died was never sent again; here it waits in the inbox for the next start.
 *
 * @example
 * const polling = startDurablePolling({ api: bot.api, inbox, logger, allowedUpdates: ALLOWED_UPDATES });
 * await polling.stop();
 */
export function startDurablePolling(options: DurablePollingOptions): DurablePolling {
  const { api, inbox, logger } = options;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  const abort = new AbortController();
  let offset: number | undefined;
  let failures = 0;

  async function pollOnce(): Promise<void> {
    const updates: Update[] = await api.getUpdates(
      {
        ...(offset === undefined ? {} : { offset }),
        timeout: options.timeoutSeconds ?? 30,
        limit: 100,
        allowed_updates: options.allowedUpdates as never,
      },
      // grammY types its signal with a shim's class; Node's own is what it uses at run time.
      abort.signal as Parameters<Api['getUpdates']>[1],
    );
    if (updates.length === 0) return;
    // Stored before the next poll confirms them: a crash from here on finds them in the inbox.
    await inbox.receiveAll(updates);
    offset = updates[updates.length - 1]!.update_id + 1;
  }

  const loop = (async () => {
    while (!abort.signal.aborted) {
      try {
        await pollOnce();
        if (failures > 0) logger.info({ failures }, 'polling Telegram again');
        failures = 0;
      } catch (error) {
        if (abort.signal.aborted) return;
        if (isFatal(error)) {
          logger.fatal({ err: loggableError(error) }, 'Telegram refused polling; the bot gets no updates until it is restarted');
          return;
        }
        failures++;
        const waitMs = Math.min(maxBackoffMs, 500 * 2 ** Math.min(failures - 1, 10));
        // One warning when an outage starts, then one per doubling: not a line per attempt.
        if ((failures & (failures - 1)) === 0)
          logger.warn({ err: loggableError(error), failures, retryInMs: waitMs }, 'could not poll Telegram; retrying');
        await sleep(waitMs, undefined, { signal: abort.signal }).catch(() => undefined);
      }
    }
  })();

  return {
    async stop() {
      abort.abort();
      await loop;
    },
  };
}
