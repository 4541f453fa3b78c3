import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';

/** The table of migrations/20261123_06_webapp_nonces.ts. */
export type WebAppNonceTables = {
  webapp_nonces: {
    nonce_hash: string;
    card_id: string;
    telegram_user_id: number;
    chat_id: number;
    token_hash: string;
    expires_at: string;
  };
};

/** How long a Details button that opens the Mini App works after it was drawn. */
export const WEBAPP_NONCE_TTL_SECONDS = 300;

/** What a nonce was issued for: a card, the Telegram user it was drawn for, and the chat's link (its token's hash). */
export interface WebAppNonceBinding {
  cardId: string;
  telegramUserId: number;
  chatId: number;
  tokenHash: string;
}

/** Any of our Kysely handles (the core's `Db`, the bot's `BotDb`): the table is reached through `withTables`. */
type AnyDb = Pick<Kysely<object>, 'withTables'>;

const tablesOf = (db: AnyDb) => db.withTables<WebAppNonceTables>() as unknown as Kysely<WebAppNonceTables>;

const hashOf = (nonce: string) => createHash('sha256').update(nonce).digest('hex');

/**
 * A new one-time nonce (256 random bits, base64url) for `binding`, valid `WEBAPP_NONCE_TTL_SECONDS`;
 * only its hash is stored. Expired nonces (of anyone) are purged on the way: the table holds no more
 * than the buttons drawn in the last few minutes.
 *
 * @example
 * const nonce = await issueWebAppNonce(db, { cardId, telegramUserId, chatId, tokenHash }, clock.now());
 */
export async function issueWebAppNonce(db: AnyDb, binding: WebAppNonceBinding, now: Date): Promise<string> {
  const nonces = tablesOf(db);
  const nonce = randomBytes(32).toString('base64url');
  await nonces.deleteFrom('webapp_nonces').where('expires_at', '<=', now.toISOString()).execute();
  await nonces
    .insertInto('webapp_nonces')
    .values({
      nonce_hash: hashOf(nonce),
      card_id: binding.cardId,
      telegram_user_id: binding.telegramUserId,
      chat_id: binding.chatId,
      token_hash: binding.tokenHash,
      expires_at: new Date(now.getTime() + WEBAPP_NONCE_TTL_SECONDS * 1000).toISOString(),
    })
    .execute();
  return nonce;
}

/**
 * Uses up `nonce` for `telegramUserId`: one delete decides, so of two requests with the same nonce
 * only one gets its binding, and a replay gets nothing. A nonce of another user, or expired, is left
 * alone and yields nothing.
 */
export async function consumeWebAppNonce(
  db: AnyDb,
  nonce: string,
  telegramUserId: number,
  now: Date,
): Promise<WebAppNonceBinding | undefined> {
  const row = await tablesOf(db)
    .deleteFrom('webapp_nonces')
    .where('nonce_hash', '=', hashOf(nonce))
    .where('telegram_user_id', '=', telegramUserId)
    .where('expires_at', '>', now.toISOString())
    .returning(['card_id', 'telegram_user_id', 'chat_id', 'token_hash'])
    .executeTakeFirst();
  return (
    row && { cardId: row.card_id, telegramUserId: Number(row.telegram_user_id), chatId: Number(row.chat_id), tokenHash: row.token_hash }
  );
}

/** The Mini App's address for one press of Details: `WEBAPP_URL` with the nonce as the `nonce` query parameter. */
export function webAppButtonUrl(webAppUrl: string, nonce: string): string {
  const url = new URL(webAppUrl);
  url.searchParams.set('nonce', nonce);
  return url.toString();
}
