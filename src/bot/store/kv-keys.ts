// What the bot keeps per chat in `bot_kv`, each under a key of its own.

/** Where a chat's conversation state is kept in `bot_kv`. */
export const CONVERSATION_KEY_PREFIX = 'conversation:';

/** The conversation state's key in `bot_kv`. */
export const conversationKey = (chatId: number) => `${CONVERSATION_KEY_PREFIX}${chatId}`;

/** The language a chat was linked in, so pushed messages (which have no sender) use it too. */
export const chatLocaleKey = (chatId: number) => `locale:${chatId}`;

/** The card this chat last acted on (its id), offered first in card pickers. */
export const lastCardKey = (chatId: number) => `lastcard:${chatId}`;

/** The message under which the chat's flow left buttons waiting for a press (its id). */
export const flowButtonsKey = (chatId: number) => `flowbuttons:${chatId}`;
