import { compiledOnce } from '../../db/compiled-query.js';
import type { Executor } from '../../db/schema.js';
import type { BotDb } from './tables.js';

export interface ChatLink {
  chatId: number;
  userId: string;
  tokenHash: string;
  /**
   * Remote mode: the token itself, sealed with the card-data key and bound to the chat; written with the
   * link, read only by the remote card service (never on the embedded update path).
   */
  sealedToken?: string;
}

const linkOfChat = compiledOnce(1, (ex, chatId: number) =>
  (ex as unknown as BotDb).selectFrom('bot_chat_links').select(['user_id', 'token_hash']).where('chat_id', '=', chatId),
);

/** Read where the chat's conversation state is not wanted (the Mini App, a pre-checkout query): compiled once. */
export async function findLink(db: BotDb, chatId: number): Promise<ChatLink | undefined> {
  const { rows } = await linkOfChat.execute(db as unknown as Executor, chatId);
  const row = rows[0];
  return row && { chatId, userId: row.user_id, tokenHash: row.token_hash };
}

/**
 * The chats' links, read from the database on every update and never kept in memory: another process
 * (the admin command line's `links remove` or `tokens revoke`, a second bot instance) may end one at
 * any moment, and a link ended there must stop this process at once.
 */
export class ChatLinks {
  constructor(private readonly db: BotDb) {}

  find(chatId: number): Promise<ChatLink | undefined> {
    return findLink(this.db, chatId);
  }

  save(link: ChatLink, at: Date): Promise<void> {
    return saveLink(this.db, link, at);
  }

  /** False when the link was gone already (ended elsewhere). */
  delete(chatId: number): Promise<boolean> {
    return deleteLink(this.db, chatId);
  }
}

export async function saveLink(db: BotDb, link: ChatLink, at: Date): Promise<void> {
  const values = {
    chat_id: link.chatId,
    user_id: link.userId,
    token_hash: link.tokenHash,
    linked_at: at.toISOString(),
    sealed_token: link.sealedToken ?? null,
  };
  await db
    .insertInto('bot_chat_links')
    .values(values)
    .onConflict((oc) =>
      oc.column('chat_id').doUpdateSet({
        user_id: values.user_id,
        token_hash: values.token_hash,
        linked_at: values.linked_at,
        sealed_token: values.sealed_token,
      }),
    )
    .execute();
}

export async function deleteLink(db: BotDb, chatId: number): Promise<boolean> {
  const result = await db.deleteFrom('bot_chat_links').where('chat_id', '=', chatId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function chatsOfUser(db: BotDb, userId: string): Promise<ChatLink[]> {
  const rows = await db.selectFrom('bot_chat_links').selectAll().where('user_id', '=', userId).orderBy('chat_id').execute();
  return rows.map((row) => ({ chatId: Number(row.chat_id), userId: row.user_id, tokenHash: row.token_hash }));
}
