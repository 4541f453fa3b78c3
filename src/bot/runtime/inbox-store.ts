import type { Update } from 'grammy/types';
import type { Kysely, Transaction } from 'kysely';
import type { CardDataCipher } from '../card-service/from-core.js';
import type { Db } from '../../db/schema.js';
import { loggableError } from '../../infra/log-safe.js';
import type { Logger } from '../../infra/logger.js';
import type { BotDb, BotTables } from '../store/tables.js';

/** The bot's tables with the inbox's (migrations/20261123_05_webhook_inbox.ts). */
export type InboxTables = BotTables & {
  /** Updates as Telegram posted them; `handled_at` set (and `payload` emptied) once handled. */
  bot_updates: { update_id: number; chat_key: string; payload: string; received_at: string; handled_at: string | null };
  /** One row per chat that ever had an update: who handles its updates now, and until when unless renewed. */
  bot_chat_leases: { chat_key: string; claimed_by: string | null; claimed_until: string | null };
};

export type InboxDb = Kysely<InboxTables>;
export type InboxExecutor = InboxDb | Transaction<InboxTables>;

/** A stored payload sealed with the card-data key starts with this. */
export const SEALED = 'sealed:';
/** What a sealed payload is bound to: its update. */
export const sealContext = (updateId: number) => `bot_updates:${updateId}`;

/** Stores an update in its chat; returns false for a repeat of a stored update_id, which is ignored. */
export async function storeUpdate(
  trx: InboxExecutor,
  row: { updateId: number; chatKey: string; payload: string; receivedAt: string },
): Promise<boolean> {
  const inserted = await trx
    .insertInto('bot_updates')
    .values({
      update_id: row.updateId,
      chat_key: row.chatKey,
      payload: row.payload,
      received_at: row.receivedAt,
      handled_at: null,
    })
    .onConflict((oc) => oc.column('update_id').doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
}

/** The chat's oldest stored update not yet handled. */
export const oldestPending = (ex: InboxExecutor, chatKey: string) =>
  ex
    .selectFrom('bot_updates')
    .select(['update_id', 'payload'])
    .where('chat_key', '=', chatKey)
    .where('handled_at', 'is', null)
    .orderBy('update_id')
    .limit(1)
    .executeTakeFirst();

/** A stored update; undefined (logged) for a sealed one this key cannot open, which is then skipped. */
export function readPayload(
  cipher: Pick<CardDataCipher, 'decrypt'> | undefined,
  logger: Logger,
  updateId: number,
  payload: string,
): Update | undefined {
  if (!payload.startsWith(SEALED)) return JSON.parse(payload) as Update;
  try {
    return JSON.parse(cipher!.decrypt(payload.slice(SEALED.length), sealContext(updateId))) as Update;
  } catch (error) {
    logger.error({ err: loggableError(error), updateId }, 'a stored update sealed with another card-data key was skipped');
    return undefined;
  }
}

/** Forgets the updates handled before `before`. */
export async function pruneHandled(db: InboxDb, before: string): Promise<void> {
  await db.deleteFrom('bot_updates').where('handled_at', '<', before).execute();
}

/**
 * When the oldest update stored and not yet handled arrived, among the first `max` such rows (the
 * metrics' look, cheap however long the backlog); undefined when every stored update is handled.
 */
export async function oldestUnhandledAt(db: Db | BotDb, max: number): Promise<Date | undefined> {
  const row = await (db as unknown as InboxDb)
    .selectFrom((eb) => eb.selectFrom('bot_updates').select('received_at').where('handled_at', 'is', null).limit(max).as('unhandled'))
    .select((eb) => eb.fn.min('received_at').as('oldest'))
    .executeTakeFirst();
  return row?.oldest ? new Date(row.oldest) : undefined;
}
