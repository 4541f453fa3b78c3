import { sql } from 'kysely';
import { claimRows, type Claim, type Claimant, type Queue } from '../../db/claims.js';
import type { UnlinkReason } from '../card-service/from-core.js';
import type { BotDb, BotTables } from './tables.js';

/** A chat to be told, once, that its link ended and why (`bot_notices`), in the language it was linked in. */
export interface Notice {
  chatId: number;
  kind: UnlinkReason;
  locale: string;
}

/** Leaves a notice for the chat; a second one of the same kind is the same notice. */
export async function addNotice(db: BotDb, chatId: number, kind: UnlinkReason, locale: string | null, at: string): Promise<void> {
  await db
    .insertInto('bot_notices')
    .values({ chat_id: chatId, kind, locale, created_at: at })
    .onConflict((oc) => oc.columns(['chat_id', 'kind']).doNothing())
    .execute();
}

const toNotice = (row: BotTables['bot_notices']): Notice => ({
  chatId: Number(row.chat_id),
  kind: row.kind as UnlinkReason,
  locale: row.locale ?? 'en',
});

/** The unlink notices as a queue: all of them, the oldest first. */
const NOTICES: Queue = { table: 'bot_notices', key: ['chat_id', 'kind'], work: () => sql`1 = 1`, order: ['created_at'] };

/** Up to `limit` notices no other process holds, the oldest first, held for `claimant` until forgotten or released. */
export function claimNotices(db: BotDb, claimant: Claimant, limit = 50): Promise<Claim<Notice>> {
  return claimRows(db, NOTICES, claimant, limit, toNotice);
}

export async function forgetNotice(db: BotDb, notice: Notice): Promise<void> {
  await db.deleteFrom('bot_notices').where('chat_id', '=', notice.chatId).where('kind', '=', notice.kind).execute();
}
