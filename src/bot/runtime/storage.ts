import type { VersionedStateStorage } from '@grammyjs/conversations';
import type { Clock } from '../card-service/from-core.js';
import type { BotContext } from '../context.js';
import { conversationKey } from '../store/kv-keys.js';
import { deleteKv, readKv, writeKv } from '../store/kv.js';
import type { BotDb } from '../store/tables.js';

/**
 * The conversations plugin's storage over `bot_kv`, one entry per chat. Nothing is kept in memory:
 * another process may have moved the chat's conversation on since (a second webhook instance handled its
 * last update, or `tokens revoke` ended it from the command line). The state comes from the chat's
 * record read at the start of this update with its link (`ctx.chatRecord`), or from the database when
 * the update has none; writes and deletions go to the database at once.
 */
export function conversationStorage<T>(db: BotDb, clock: Clock): VersionedStateStorage<BotContext, T> {
  return {
    async read(ctx) {
      const chatId = ctx.chat?.id;
      if (chatId === undefined) return undefined;
      const value = ctx.chatRecord ? ctx.chatRecord.conversation : await readKv(db, conversationKey(chatId));
      return value === undefined ? undefined : JSON.parse(value);
    },
    async write(ctx, value) {
      if (ctx.chat) await writeKv(db, conversationKey(ctx.chat.id), JSON.stringify(value), clock.now());
    },
    async delete(ctx) {
      if (ctx.chat) await deleteKv(db, conversationKey(ctx.chat.id));
    },
  };
}
