import type { Update } from 'grammy/types';

/**
 * Our API tokens are `vc_` and 43 base64url characters (src/core/keys/secrets.ts). A longer run is taken
 * as one too: it may hold a token glued to other text, and deleting too much is the safe mistake.
 */
const TOKEN_RUN = /vc_[A-Za-z0-9_-]{43,}/;
const TOKEN_RUNS = new RegExp(TOKEN_RUN.source, 'g');

/**
 * The distinct token-like runs in `text`, in order.
 *
 * @example
 * findApiTokens(`my token is ${token}, thanks`); // [token]
 */
export function findApiTokens(text: string): string[] {
  if (!text.includes('vc_')) return [];
  return [...new Set(text.match(TOKEN_RUNS) ?? [])];
}

/** The text or caption of a new or edited message or channel post, with the addresses of its text links. */
export function messageTextOf(update: Update): string | undefined {
  const message = update.message ?? update.edited_message ?? update.channel_post ?? update.edited_channel_post;
  if (!message) return undefined;
  const text = message.text ?? message.caption;
  const links = (message.entities ?? message.caption_entities)?.filter((e) => e.type === 'text_link');
  return links?.length ? [text ?? '', ...links.map((e) => (e as { url: string }).url)].join('\n') : text;
}

/**
 * Whether the update's message holds something shaped like one of our tokens. On the path of every
 * update: a plain `includes` turns away all ordinary text before any regular expression runs.
 */
export function holdsApiToken(update: Update): boolean {
  const text = messageTextOf(update);
  if (text === undefined) return false;
  return text.includes('vc_') && TOKEN_RUN.test(text);
}
