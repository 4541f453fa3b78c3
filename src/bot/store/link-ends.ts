import type { ChatLinkPort, UnlinkReason } from '../card-service/from-core.js';
import type { Db } from '../../db/schema.js';
import { dropOpenConfirmations } from './confirmations.js';
import { deleteKv } from './kv.js';
import { chatLocaleKey, conversationKey } from './kv-keys.js';
import { addNotice } from './notices.js';
import type { BotDb, BotTables } from './tables.js';

/**
 * The bot's chat links as the core's `ChatLinkPort`: the core ends them in the transaction that revokes
 * their token (from any process, the command line included). A chat's flow state and open confirmations
 * go with its link, and a notice waits in `bot_notices` until the chat has been told, once.
 */
export const botChatLinks: ChatLinkPort = {
  async endForTokens(ex, tokenHashes, at) {
    if (tokenHashes.length === 0) return [];
    const db = ex.withTables<BotTables>() as unknown as BotDb;
    const rows = await db.selectFrom('bot_chat_links').select('chat_id').where('token_hash', 'in', tokenHashes).execute();
    const chats = rows.map((row) => Number(row.chat_id));
    for (const chatId of chats) await endLink(db, chatId, 'token_revoked', at);
    return chats;
  },
  async endChat(ex, chatId, reason, at) {
    return endLink(ex.withTables<BotTables>() as unknown as BotDb, chatId, reason, at);
  },
  async list(ex, filter = {}) {
    let query = ex.withTables<BotTables>().selectFrom('bot_chat_links').selectAll().orderBy('linked_at');
    if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
    const rows = await query.execute();
    return rows.map((row) => ({ chatId: Number(row.chat_id), userId: row.user_id, tokenHash: row.token_hash, linkedAt: row.linked_at }));
  },
};

async function endLink(db: BotDb, chatId: number, reason: UnlinkReason, at: string): Promise<boolean> {
  const removed = await db.deleteFrom('bot_chat_links').where('chat_id', '=', chatId).executeTakeFirst();
  if (Number(removed.numDeletedRows) === 0) return false;
  await deleteKv(db, conversationKey(chatId));
  await dropOpenConfirmations(db, chatId);
  const locale = await db.selectFrom('bot_kv').select('value').where('key', '=', chatLocaleKey(chatId)).executeTakeFirst();
  await addNotice(db, chatId, reason, locale?.value ?? null, at);
  return true;
}

/** Ends every chat link of `userId`, each chat told once (`bot_notices`); returns the chats. */
export async function endLinksOfUser(db: Db, userId: string, at: Date): Promise<number[]> {
  return db.transaction().execute(async (trx) => {
    const rows = await trx
      .withTables<BotTables>()
      .selectFrom('bot_chat_links')
      .select('token_hash')
      .where('user_id', '=', userId)
      .execute();
    return botChatLinks.endForTokens(trx, [...new Set(rows.map((r) => r.token_hash))], at.toISOString());
  });
}
