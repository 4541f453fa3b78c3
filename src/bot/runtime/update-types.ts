import type { Update } from 'grammy/types';

/**
 * The updates the bot asks Telegram for. Not Telegram Business ones: the bot acts only in private chats
 * with the user themself, never inside a chat a business account has with its customers.
 */
export const ALLOWED_UPDATES = [
  'message',
  'edited_message',
  'channel_post',
  'edited_channel_post',
  'callback_query',
  'pre_checkout_query',
] as const;

/**
 * An update's type: its one field beside `update_id` (`message`, `callback_query`, ...). A loop rather
 * than `Object.keys`, which makes an array for every update.
 */
export function updateTypeOf(update: Update): string {
  for (const key in update) if (key !== 'update_id') return key;
  return 'unknown';
}
