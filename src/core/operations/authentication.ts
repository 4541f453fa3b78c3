import { compiledOnce } from '../../db/compiled-query.js';
import type { Db, Executor } from '../../db/schema.js';
import { isoTime, type Clock } from '../../infra/clock.js';
import { CardServiceError } from '../rules/errors.js';
import type { Caller } from './views.js';

/**
 * A caller known only by its token's hash, for an operation that checks the token in its own statement
 * (the HTTP top-up on Postgres: one round trip instead of two). The operation refuses an unknown or
 * revoked token with `INVALID_TOKEN` having changed nothing, and calls `authenticated` once it has
 * found the caller, before any other refusal.
 */
export interface TokenHolder {
  tokenHash: string;
  authenticated(caller: Caller): void;
}

export function isTokenHolder(who: Caller | TokenHolder): who is TokenHolder {
  return 'tokenHash' in who;
}

/** A token's row as a lookup finds it: whose it is, and when it was last used (for `noteUse`). */
export interface TokenUse {
  tokenId: string;
  lastUsedAt: string | null;
}

/** What a token lookup reads of a token and its user: the caller, and the token's use. */
export interface TokenRow extends TokenUse {
  userId: string;
  walletAccountId: number | string;
}

/**
 * The valid (unrevoked) token with `tokenHash` joined to its user, selecting a `TokenRow`. An operation
 * that checks its caller's token in its own statement (the wallet read) starts from here and joins on.
 */
export function tokenHolderQuery(ex: Executor, tokenHash: string) {
  return ex
    .selectFrom('api_tokens')
    .innerJoin('users', 'users.id', 'api_tokens.user_id')
    .select([
      'users.id as userId',
      'users.wallet_account_id as walletAccountId',
      'api_tokens.id as tokenId',
      'api_tokens.last_used_at as lastUsedAt',
    ])
    .where('api_tokens.token_hash', '=', tokenHash)
    .where('api_tokens.revoked_at', 'is', null);
}

const callerByTokenHash = compiledOnce(1, tokenHolderQuery);

const recordUse = compiledOnce(2, (ex, tokenId: string, at: string) =>
  ex.updateTable('api_tokens').set({ last_used_at: at }).where('id', '=', tokenId),
);

/** A token's last use is written at most this often: a write per request would make every read a write. */
const LAST_USE_RESOLUTION_MS = 60_000;
/** Tokens whose last write this process remembers; past that it forgets them all (a few writes twice, no harm). */
const MAX_REMEMBERED_USES = 10_000;

/** Callers by their token's hash, each use recorded at most once a minute. Runs on every request: compiled once. */
export function createAuthentication(db: Db, clock: Clock) {
  // When this process last wrote (or began writing) each token's last use. Requests that read the row
  // before that write committed leave it be: 50 requests crossing the minute at once write once, not 50 times.
  const useWrittenAt = new Map<string, number>();

  /** Records a use of the token found by a lookup, unless this minute's use is already written. */
  async function noteUse({ tokenId, lastUsedAt }: TokenUse): Promise<void> {
    const now = clock.now().getTime();
    const written = useWrittenAt.get(tokenId);
    if (written !== undefined && now - written < LAST_USE_RESOLUTION_MS) return;
    const lastUse = Math.max(lastUsedAt === null ? -Infinity : Date.parse(lastUsedAt), written ?? -Infinity);
    if (now - lastUse < LAST_USE_RESOLUTION_MS) return;
    if (useWrittenAt.size >= MAX_REMEMBERED_USES) useWrittenAt.clear();
    useWrittenAt.set(tokenId, now);
    try {
      await recordUse.execute(db, tokenId, isoTime(now));
    } catch (error) {
      useWrittenAt.delete(tokenId);
      throw error;
    }
  }

  /** The caller a token lookup found, its use recorded; no row (an unknown or revoked token) is refused. */
  async function callerFrom(row: TokenRow | undefined): Promise<Caller> {
    if (!row) throw new CardServiceError('INVALID_TOKEN');
    await noteUse(row);
    return { userId: row.userId, walletAccountId: Number(row.walletAccountId) };
  }

  /** The caller behind a token's hash, its use recorded; an unknown or revoked token is refused. */
  async function byTokenHash(tokenHash: string): Promise<Caller> {
    return callerFrom((await callerByTokenHash.execute(db, tokenHash)).rows[0]);
  }

  /**
   * The caller a holder's token lookup found (`row`, from `tokenHolderQuery`), its use recorded and
   * told to the holder; none is refused.
   */
  async function holderFound(holder: TokenHolder, row: TokenRow | undefined): Promise<Caller> {
    const caller = await callerFrom(row);
    holder.authenticated(caller);
    return caller;
  }

  return {
    noteUse,
    byTokenHash,
    /** For an operation that read its holder's token in its own statement: see `holderFound`. */
    holderFound,

    /** Whether a token (by its hash) still works, without counting as a use of it. */
    async isActive(tokenHash: string): Promise<boolean> {
      return (await callerByTokenHash.execute(db, tokenHash)).rows.length > 0;
    },

    /** The caller `who` stands for: itself, or the holder's token looked up (told to the holder). */
    async resolve(who: Caller | TokenHolder): Promise<Caller> {
      if (!isTokenHolder(who)) return who;
      return holderFound(who, (await callerByTokenHash.execute(db, who.tokenHash)).rows[0]);
    },
  };
}

export type Authentication = ReturnType<typeof createAuthentication>;
