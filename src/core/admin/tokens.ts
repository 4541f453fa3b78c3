import { randomUUID } from 'node:crypto';
import type { SelectQueryBuilder } from 'kysely';
import type { Database, Executor } from '../../db/schema.js';
import { hashToken, newApiToken } from '../keys/secrets.js';
import type { LinkedChat } from '../operations/chat-links.js';
import { AdminError } from './errors.js';
import { type PeopleDeps, requireUser } from './people-deps.js';

/** A user's API tokens and the chats linked with them, as an operator looks after them. */

/** An API token as an operator sees it: never the token itself. */
export interface TokenRecord {
  id: string;
  userId: string;
  /** The token's first characters (`vc_` and four more), or null for tokens issued before they were kept. */
  prefix: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface ChatLinkRecord {
  chatId: number;
  userId: string;
  /** The token the chat was linked with (null if that token no longer exists). */
  tokenId: string | null;
  linkedAt: string;
}

type ActiveTokens = SelectQueryBuilder<Database, 'api_tokens', { id: string; token_hash: string }>;

/** How many characters of a token are kept to tell it apart: `vc_` and 24 of its 256 random bits. */
const TOKEN_PREFIX_LENGTH = 7;

/** A new token for the user, returned once (only its hash and prefix are kept). */
export async function insertToken({ clock }: Pick<PeopleDeps, 'clock'>, ex: Executor, userId: string): Promise<string> {
  const token = newApiToken();
  await ex
    .insertInto('api_tokens')
    .values({
      id: randomUUID(),
      user_id: userId,
      token_hash: hashToken(token),
      prefix: token.slice(0, TOKEN_PREFIX_LENGTH),
      created_at: clock.now().toISOString(),
      revoked_at: null,
      last_used_at: null,
    })
    .execute();
  return token;
}

export async function issueToken(deps: PeopleDeps, userId: string): Promise<string> {
  await requireUser(deps, userId);
  return insertToken(deps, deps.db, userId);
}

/**
 * Revokes the still-active tokens `which` selects and ends the chat links made with them, in one
 * transaction: from its commit on, no request, bot update or push goes through for those tokens.
 */
async function revoke(
  { db, clock, chatLinks }: PeopleDeps,
  which: (q: ActiveTokens) => ActiveTokens,
): Promise<{ tokens: number; chats: number[] }> {
  const at = clock.now().toISOString();
  return db.transaction().execute(async (trx) => {
    const active = await which(trx.selectFrom('api_tokens').select(['id', 'token_hash']).where('revoked_at', 'is', null)).execute();
    if (active.length === 0) return { tokens: 0, chats: [] };
    await trx
      .updateTable('api_tokens')
      .set({ revoked_at: at })
      .where(
        'id',
        'in',
        active.map((t) => t.id),
      )
      .execute();
    const chats = await chatLinks.endForTokens(
      trx,
      active.map((t) => t.token_hash),
      at,
    );
    return { tokens: active.length, chats };
  });
}

/** Revokes the token given in full; its chats are unlinked in the same transaction. */
export async function revokeToken(deps: PeopleDeps, token: string): Promise<{ chats: number[] }> {
  const { tokens, chats } = await revoke(deps, (q) => q.where('token_hash', '=', hashToken(token)));
  if (tokens === 0) throw new AdminError('No active token matches');
  return { chats };
}

/** Revokes a token by its id (from `tokens list`): no plaintext needed. */
export async function revokeTokenById(deps: PeopleDeps, tokenId: string): Promise<{ chats: number[] }> {
  const { tokens, chats } = await revoke(deps, (q) => q.where('id', '=', tokenId));
  if (tokens === 0) throw new AdminError(`No active token with id ${tokenId}`);
  return { chats };
}

/** Cuts a user off: every active token revoked and every linked chat unlinked, at once. */
export async function revokeAllTokens(deps: PeopleDeps, userId: string): Promise<{ tokens: number; chats: number[] }> {
  await requireUser(deps, userId);
  return revoke(deps, (q) => q.where('user_id', '=', userId));
}

export async function listTokens(deps: PeopleDeps, userId: string): Promise<TokenRecord[]> {
  await requireUser(deps, userId);
  const rows = await deps.db
    .selectFrom('api_tokens')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toTokenRecord);
}

function toTokenRecord(row: {
  id: string;
  user_id: string;
  prefix: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}): TokenRecord {
  return {
    id: row.id,
    userId: row.user_id,
    prefix: row.prefix,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

export async function listLinks(deps: PeopleDeps, filter: { userId?: string } = {}): Promise<ChatLinkRecord[]> {
  if (filter.userId !== undefined) await requireUser(deps, filter.userId);
  return linkRecords(deps, await deps.chatLinks.list(deps.db, filter));
}

async function linkRecords({ db }: Pick<PeopleDeps, 'db'>, links: LinkedChat[]): Promise<ChatLinkRecord[]> {
  const hashes = [...new Set(links.map((l) => l.tokenHash))];
  const tokens = hashes.length
    ? await db.selectFrom('api_tokens').select(['id', 'token_hash']).where('token_hash', 'in', hashes).execute()
    : [];
  const idOf = new Map(tokens.map((t) => [t.token_hash, t.id]));
  return links.map((l) => ({ chatId: l.chatId, userId: l.userId, tokenId: idOf.get(l.tokenHash) ?? null, linkedAt: l.linkedAt }));
}

/** Unlinks one chat (its flows end; it is told once). */
export async function removeLink({ db, clock, chatLinks }: PeopleDeps, chatId: number): Promise<void> {
  const removed = await db.transaction().execute((trx) => chatLinks.endChat(trx, chatId, 'removed_by_operator', clock.now().toISOString()));
  if (!removed) throw new AdminError(`Chat ${chatId} is not linked`);
}
