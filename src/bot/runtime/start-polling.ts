import { createBot } from '../index.js';
import { startBackgroundJobs } from '../jobs/background-jobs.js';
import type { BotDeps } from '../services.js';
import { botTables } from '../store/tables.js';
import { botInbox } from './bot-inbox.js';
import { updatesSettled } from './cards-bot.js';
import { setCommands } from './commands.js';
import { takePollingLease } from './poller-lease.js';
import { startDurablePolling } from './polling.js';
import { initBot, type RunningBot } from './running-bot.js';
import { ALLOWED_UPDATES } from './update-types.js';

/**
 * Long polling with the command list set and the background jobs running. Each fetched batch is stored in
 * the durable inbox before the next poll confirms it to Telegram, then handled from there (one chat's
 * updates at a time, in order), as webhook updates are: a crash loses no update, a paid payment included.
 */
export async function startBot(deps: BotDeps): Promise<RunningBot> {
  const bot = createBot(deps, { sequentialize: false });
  await initBot(bot, deps);
  // One poller per bot: a second process on the same database is refused (PollerTakenError).
  const lease = await takePollingLease(botTables(deps.db), deps.clock, deps.logger, deps.config.pollerLeaseMs);
  try {
    await bot.api.deleteWebhook();
    await setCommands(bot);
  } catch (error) {
    await lease.release();
    throw error;
  }
  const jobs = startBackgroundJobs(bot);
  // Updates a crashed poller had stored and not handled are taken up by the inbox's sweep once their chats' leases lapse.
  const inbox = botInbox(bot, deps.config.inbox);
  const polling = startDurablePolling({ api: bot.api, inbox, logger: deps.logger, allowedUpdates: ALLOWED_UPDATES });
  deps.logger.info({ username: bot.botInfo.username }, 'bot polling');
  return {
    bot,
    async stop() {
      await polling.stop();
      await inbox.stop();
      await updatesSettled(bot);
      await jobs.stop();
      await lease.release();
    },
  };
}
