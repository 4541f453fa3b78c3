import type { Update, UserFromGetMe } from 'grammy/types';

/** Update factories for in-process bot tests (`bot.handleUpdate`). */

export const BOT_INFO: UserFromGetMe = {
  id: 777000,
  is_bot: true,
  first_name: 'Cards',
  username: 'cards_test_bot',
  can_join_groups: true,
  can_read_all_group_messages: false,
  supports_inline_queries: false,
  can_connect_to_business: false,
  has_main_web_app: false,
} as UserFromGetMe;

let nextUpdateId = 1;
let nextMessageId = 10_000;
let nextQueryId = 1;

export interface From {
  id: number;
  languageCode?: string;
  /** A group chat id (negative) to send from a group instead of the private chat. */
  groupId?: number;
}

function chatOf(from: From) {
  return from.groupId !== undefined
    ? { id: from.groupId, type: 'group' as const, title: 'Group' }
    : { id: from.id, type: 'private' as const, first_name: 'Alice' };
}

function userOf(from: From) {
  return { id: from.id, is_bot: false as const, first_name: 'Alice', language_code: from.languageCode ?? 'en' };
}

/** A text message (a command when it starts with `/`). */
export function textUpdate(from: From, text: string): Update {
  const command = /^\/\w+/.exec(text);
  return {
    update_id: nextUpdateId++,
    message: {
      message_id: nextMessageId++,
      date: 1_700_000_000,
      chat: chatOf(from),
      from: userOf(from),
      text,
      ...(command ? { entities: [{ type: 'bot_command' as const, offset: 0, length: command[0].length }] } : {}),
    },
  } as Update;
}

/** A press on an inline button with `data` under the bot's message `messageId`. */
export function callbackUpdate(from: From, data: string, messageId = 1, text = 'menu'): Update {
  return {
    update_id: nextUpdateId++,
    callback_query: {
      id: String(nextQueryId++),
      from: userOf(from),
      chat_instance: String(from.groupId ?? from.id),
      data,
      message: { message_id: messageId, date: 1_700_000_000, chat: chatOf(from), from: BOT_INFO, text },
    },
  } as Update;
}
