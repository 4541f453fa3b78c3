import type { Kysely } from 'kysely';
import type { CardDataCipher } from '../card-service/from-core.js';
import { type InboxTables, SEALED, sealContext } from '../runtime/inbox-store.js';
import type { Executor } from '../../db/schema.js';
import type { BotDb } from './tables.js';

// Remote mode's tokens, sealed with the card-data key in each chat's link (`bot_chat_links.sealed_token`).

/** What a remote service's token, sealed in a chat's link, is bound to: that chat (a value moved to another chat does not open). */
export const linkTokenContext = (chatId: number) => `bot_chat_links:${chatId}:token`;

/** The token sealed in a chat's link made with `tokenHash` (remote mode); undefined when there is none. */
export async function sealedTokenOf(db: BotDb, chatId: number, tokenHash: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('bot_chat_links')
    .select('sealed_token')
    .where('chat_id', '=', chatId)
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
  return row?.sealed_token ?? undefined;
}

/** Each chat link holding a sealed remote token, the oldest first: its chat, user, sealed token and when it was linked. */
export async function sealedTokenLinks(db: BotDb): Promise<{ chatId: number; userId: string; sealed: string; linkedAt: string }[]> {
  const rows = await db
    .selectFrom('bot_chat_links')
    .select(['chat_id', 'user_id', 'sealed_token', 'linked_at'])
    .where('sealed_token', 'is not', null)
    .orderBy('linked_at')
    .execute();
  return rows.map((row) => ({ chatId: Number(row.chat_id), userId: row.user_id, sealed: row.sealed_token!, linkedAt: row.linked_at }));
}

/**
 * Re-seals what the bot keeps under the card-data key (remote tokens in chat links, stored updates holding a
 * token) from `from`'s key to `to`'s, in the rotation's transaction (src/core/keys/card-data-keys.ts). Returns how many.
 */
export async function resealBotSecrets(
  ex: Executor,
  from: Pick<CardDataCipher, 'decrypt'>,
  to: Pick<CardDataCipher, 'encrypt'>,
): Promise<number> {
  const db = ex.withTables<InboxTables>() as unknown as Kysely<InboxTables>;
  const links = await db.selectFrom('bot_chat_links').select(['chat_id', 'sealed_token']).where('sealed_token', 'is not', null).execute();
  for (const link of links) {
    const context = linkTokenContext(Number(link.chat_id));
    await db
      .updateTable('bot_chat_links')
      .set({ sealed_token: to.encrypt(from.decrypt(link.sealed_token!, context), context) })
      .where('chat_id', '=', link.chat_id)
      .execute();
  }
  const updates = await db.selectFrom('bot_updates').select(['update_id', 'payload']).where('payload', 'like', `${SEALED}%`).execute();
  for (const update of updates) {
    const context = sealContext(Number(update.update_id));
    const plain = from.decrypt(update.payload.slice(SEALED.length), context);
    await db
      .updateTable('bot_updates')
      .set({ payload: `${SEALED}${to.encrypt(plain, context)}` })
      .where('update_id', '=', update.update_id)
      .execute();
  }
  return links.length + updates.length;
}
