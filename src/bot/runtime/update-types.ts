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

type Body = { chat?: { id: number }; message?: { chat?: { id: number } }; from?: { id: number }; user?: { id: number } };

/** Where an update comes from: its type, its chat (a callback query's is its message's) and its sender, when it has them. */
export interface UpdateOrigin {
  updateType: string;
  chatId: number | undefined;
  userId: number | undefined;
}

/**
 * The one reading of an update's body, for whatever needs its chat: the inbox's chat key (polled and posted
 * updates alike) and the debug log line. Nothing of its content.
 */
export function updateOriginOf(update: Update): UpdateOrigin {
  const updateType = updateTypeOf(update);
  const body = (update as unknown as Record<string, Body | undefined>)[updateType];
  return { updateType, chatId: body?.chat?.id ?? body?.message?.chat?.id, userId: body?.from?.id ?? body?.user?.id };
}

/** The update's type and its chat's id, if it has one, for the debug log line: nothing of its content. */
export function updateSummary(update: Update): { updateId: number; updateType: string; chatId?: number } {
  const { updateType, chatId } = updateOriginOf(update);
  return chatId === undefined ? { updateId: update.update_id, updateType } : { updateId: update.update_id, updateType, chatId };
}
