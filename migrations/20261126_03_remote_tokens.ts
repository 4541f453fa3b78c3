import type { Kysely } from 'kysely';

// Frozen in time: this file describes the schema as it was on the day it was written.

/**
 * Remote mode (`CARD_SERVICE_URL`): the bot acts for a chat with the token the chat linked, so it keeps
 * the token, sealed with the card-data key and bound to the chat (src/bot/card-service/remote.ts). Null
 * for a link to the embedded core, which needs only the token's hash.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('bot_chat_links').addColumn('sealed_token', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('bot_chat_links').dropColumn('sealed_token').execute();
}
