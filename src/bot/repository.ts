import { sql, type Kysely } from 'kysely';
import type { CardDataCipher, ChatLinkPort, UnlinkReason } from './card-service/from-core.js';
import type { RemoteWatchTables } from '../remote/known-cards.js';
import { type InboxTables, SEALED, sealContext } from './runtime/inbox.js';
import { claimRows, type Claim, type Claimant, type Queue } from '../db/claims.js';
import { freeAt } from '../db/lease.js';
import { compiledOnce } from '../db/compiled-query.js';
import type { Db, Executor } from '../db/schema.js';

/** The bot's own tables (migrations/20261122_02_bot.ts). The bot never touches the core's tables. */
export type BotTables = {
  bot_chat_links: { chat_id: number; user_id: string; token_hash: string; linked_at: string; sealed_token: string | null };
  bot_kv: { key: string; value: string; updated_at: string };
  bot_pending_deletions: { chat_id: number; message_id: number; due_at: string } & Claimed;
  bot_deliveries: { seq: number; chat_id: number; delivered_at: string };
  bot_confirmations: { nonce: string; chat_id: number; created_at: string; used_at: string | null };
  bot_notices: { chat_id: number; kind: string; locale: string | null; created_at: string } & Claimed;
};

/** Who works on a queued row, until when (`src/db/claims.ts`); null when nobody does. Optional when inserting. */
type Claimed = { claimed_by?: string | null; claimed_until?: string | null };

/** Where a chat's conversation state is kept in `bot_kv`. */
export const CONVERSATION_KEY_PREFIX = 'conversation:';

export type BotDb = Kysely<BotTables>;

export function botTables(db: Db): BotDb {
  return db.withTables<BotTables>() as unknown as BotDb;
}

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

/** What the bot reads of a private chat at the start of each of its updates. */
export interface ChatRecord {
  link: ChatLink | undefined;
  /** The conversations plugin's stored state (JSON), when a flow is under way. */
  conversation: string | undefined;
}

/** The conversation state's key in `bot_kv`. */
export const conversationKey = (chatId: number) => `${CONVERSATION_KEY_PREFIX}${chatId}`;

const recordOfChat = compiledOnce(2, (ex, chatId: number, conversationKey: string) =>
  (ex as unknown as BotDb).selectNoFrom((eb) => [
    eb.selectFrom('bot_chat_links').select('user_id').where('chat_id', '=', chatId).as('user_id'),
    eb.selectFrom('bot_chat_links').select('token_hash').where('chat_id', '=', chatId).as('token_hash'),
    eb.selectFrom('bot_kv').select('value').where('key', '=', conversationKey).as('conversation'),
  ]),
);

/**
 * The chat's link and conversation state in one statement, compiled once: both are read on every
 * update of a private chat (never kept in memory, see `ChatLinks`). SQLite takes as long for the one as
 * for the two; what is saved is a trip through Kysely's executor (measured: about 8 % of a menu press).
 */
export async function readChatRecord(db: BotDb, chatId: number): Promise<ChatRecord> {
  const { rows } = await recordOfChat.execute(db as unknown as Executor, chatId, conversationKey(chatId));
  const row = rows[0];
  const link = row?.user_id && row.token_hash ? { chatId, userId: row.user_id, tokenHash: row.token_hash } : undefined;
  return { link, conversation: row?.conversation ?? undefined };
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

/** The language a chat was linked in, so pushed messages (which have no sender) use it too. */
export const chatLocaleKey = (chatId: number) => `locale:${chatId}`;

/** The card this chat last acted on (its id), offered first in card pickers. */
export const lastCardKey = (chatId: number) => `lastcard:${chatId}`;

/** The message under which the chat's flow left buttons waiting for a press (its id). */
export const flowButtonsKey = (chatId: number) => `flowbuttons:${chatId}`;

// Read on every update (conversation state, the chat's language): compiled once.
const kvValue = compiledOnce(1, (ex, key: string) => (ex as unknown as BotDb).selectFrom('bot_kv').select('value').where('key', '=', key));

export async function readKv(db: BotDb, key: string): Promise<string | undefined> {
  const { rows } = await kvValue.execute(db as unknown as Executor, key);
  return rows[0]?.value;
}

export async function writeKv(db: BotDb, key: string, value: string, at: Date): Promise<void> {
  await db
    .insertInto('bot_kv')
    .values({ key, value, updated_at: at.toISOString() })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value, updated_at: at.toISOString() }))
    .execute();
}

export async function deleteKv(db: BotDb, key: string): Promise<void> {
  await db.deleteFrom('bot_kv').where('key', '=', key).execute();
}

export async function scheduleDeletion(db: BotDb, chatId: number, messageId: number, dueAt: Date): Promise<void> {
  await db
    .insertInto('bot_pending_deletions')
    .values({ chat_id: chatId, message_id: messageId, due_at: dueAt.toISOString() })
    .onConflict((oc) => oc.columns(['chat_id', 'message_id']).doNothing())
    .execute();
}

export async function dueDeletions(db: BotDb, now: Date, limit = 50) {
  const rows = await db
    .selectFrom('bot_pending_deletions')
    .selectAll()
    .where('due_at', '<=', now.toISOString())
    .orderBy('due_at')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ chatId: Number(row.chat_id), messageId: row.message_id }));
}

export interface DueDeletion {
  chatId: number;
  messageId: number;
}

/** The scheduled deletions as a queue: due ones, the earliest first. */
const DELETIONS: Queue = {
  table: 'bot_pending_deletions',
  key: ['chat_id', 'message_id'],
  work: (now) => sql`due_at <= ${now}`,
  order: ['due_at'],
};

/** Up to `limit` due deletions no other process holds, the earliest first, held for `claimant` until forgotten or released. */
export function claimDueDeletions(db: BotDb, claimant: Claimant, limit = 50): Promise<Claim<DueDeletion>> {
  return claimRows(db, DELETIONS, claimant, limit, (row: BotTables['bot_pending_deletions']) => ({
    chatId: Number(row.chat_id),
    messageId: Number(row.message_id),
  }));
}

/**
 * The earliest time a deletion may be claimed, to sleep exactly until then: its due time. Deletions
 * another process holds are left out: their holder deletes them (or they are looked at again on the
 * loop's next tick once its lease lapses).
 */
export async function nextDeletionDue(db: BotDb, now: Date): Promise<Date | undefined> {
  const row = await db
    .selectFrom('bot_pending_deletions')
    .select('due_at')
    .where(freeAt(now.toISOString()))
    .orderBy('due_at')
    .limit(1)
    .executeTakeFirst();
  return row ? new Date(row.due_at) : undefined;
}

/** How many messages wait to be deleted, counted up to `max` (the metrics' look: cheap however many there are). */
export async function countPendingDeletions(db: BotDb, max: number): Promise<number> {
  const row = await db
    .selectFrom((eb) => eb.selectFrom('bot_pending_deletions').select('due_at').limit(max).as('pending'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function forgetDeletion(db: BotDb, chatId: number, messageId: number): Promise<void> {
  await db.deleteFrom('bot_pending_deletions').where('chat_id', '=', chatId).where('message_id', '=', messageId).execute();
}

export async function wasDelivered(db: BotDb, seq: number, chatId: number): Promise<boolean> {
  const row = await db.selectFrom('bot_deliveries').select('seq').where('seq', '=', seq).where('chat_id', '=', chatId).executeTakeFirst();
  return row !== undefined;
}

export async function recordDelivery(db: BotDb, seq: number, chatId: number, at: Date): Promise<void> {
  await db
    .insertInto('bot_deliveries')
    .values({ seq, chat_id: chatId, delivered_at: at.toISOString() })
    .onConflict((oc) => oc.columns(['seq', 'chat_id']).doNothing())
    .execute();
}

export async function issueConfirmation(db: BotDb, nonce: string, chatId: number, at: Date): Promise<void> {
  await db.insertInto('bot_confirmations').values({ nonce, chat_id: chatId, created_at: at.toISOString(), used_at: null }).execute();
}

/** Whether the chat's confirmation under `nonce` has been used (a second tap on its Confirm). */
export async function confirmationUsed(db: BotDb, nonce: string, chatId: number): Promise<boolean> {
  const row = await db
    .selectFrom('bot_confirmations')
    .select('used_at')
    .where('nonce', '=', nonce)
    .where('chat_id', '=', chatId)
    .executeTakeFirst();
  return row?.used_at != null;
}

/** True for exactly one caller per nonce: the conditional update decides, not a read. */
export async function claimConfirmation(db: BotDb, nonce: string, chatId: number, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('bot_confirmations')
    .set({ used_at: at.toISOString() })
    .where('nonce', '=', nonce)
    .where('chat_id', '=', chatId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Forgets bookkeeping nobody reads any more: used or stale confirmations, deliveries of old events. */
export async function pruneBookkeeping(db: BotDb, olderThan: Date): Promise<void> {
  const cutoff = olderThan.toISOString();
  await db.deleteFrom('bot_confirmations').where('created_at', '<', cutoff).execute();
  await db.deleteFrom('bot_deliveries').where('delivered_at', '<', cutoff).execute();
}

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
  await db.deleteFrom('bot_kv').where('key', '=', `${CONVERSATION_KEY_PREFIX}${chatId}`).execute();
  await db.deleteFrom('bot_confirmations').where('chat_id', '=', chatId).where('used_at', 'is', null).execute();
  const locale = await db.selectFrom('bot_kv').select('value').where('key', '=', chatLocaleKey(chatId)).executeTakeFirst();
  await db
    .insertInto('bot_notices')
    .values({ chat_id: chatId, kind: reason, locale: locale?.value ?? null, created_at: at })
    .onConflict((oc) => oc.columns(['chat_id', 'kind']).doNothing())
    .execute();
  return true;
}

export interface Notice {
  chatId: number;
  kind: UnlinkReason;
  locale: string;
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

/** Each chat link holding a sealed remote token, the oldest first: its chat, user and sealed token. */
export async function sealedTokenLinks(db: BotDb): Promise<{ chatId: number; userId: string; sealed: string }[]> {
  const rows = await db
    .selectFrom('bot_chat_links')
    .select(['chat_id', 'user_id', 'sealed_token'])
    .where('sealed_token', 'is not', null)
    .orderBy('linked_at')
    .execute();
  return rows.map((row) => ({ chatId: Number(row.chat_id), userId: row.user_id, sealed: row.sealed_token! }));
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

/** What a remote service's token, sealed in a chat's link, is bound to: that chat (a value moved to another chat does not open). */
export const linkTokenContext = (chatId: number) => `bot_chat_links:${chatId}:token`;

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
