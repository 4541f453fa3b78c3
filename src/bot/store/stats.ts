import type { Kysely } from 'kysely';
import type { RemoteWatchTables } from '../../remote/tables.js';
import type { BotDb, BotTables } from './tables.js';

/** What `/stats` counts where the card service is not ours (remote mode): what the bot itself sees. */
export interface BotStats {
  chats: number;
  users: number;
  knownCards: number;
  watchedCards: number;
  pushesToday: number;
  deletionsPending: number;
}

export async function botStats(bot: BotDb, now: Date): Promise<BotStats> {
  const day = now.toISOString().slice(0, 10);
  const db = bot as unknown as Kysely<BotTables & RemoteWatchTables>;
  const count = (row: { n: number | string | bigint } | undefined) => Number(row?.n ?? 0);
  const [chats, users, knownCards, watchedCards, pushesToday, deletionsPending] = await Promise.all([
    db
      .selectFrom('bot_chat_links')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst(),
    db
      .selectFrom('bot_chat_links')
      .select((eb) => eb.fn.count<number>('user_id').distinct().as('n'))
      .executeTakeFirst(),
    db
      .selectFrom('bot_remote_cards')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst(),
    db
      .selectFrom('bot_remote_cards')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('watch_until', '>', now.toISOString())
      .executeTakeFirst(),
    db
      .selectFrom('bot_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('delivered_at', '>=', `${day}T00:00:00.000Z`)
      .executeTakeFirst(),
    db
      .selectFrom('bot_pending_deletions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirst(),
  ]);
  return {
    chats: count(chats),
    users: count(users),
    knownCards: count(knownCards),
    watchedCards: count(watchedCards),
    pushesToday: count(pushesToday),
    deletionsPending: count(deletionsPending),
  };
}
