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

/** What a message may carry besides its sender and chat (text or a photo's caption, a forward's origin). */
export interface MessageFields {
  text?: string;
  caption?: string;
  /** Marks the message as forwarded from another user. */
  forwarded?: boolean;
  messageId?: number;
}

function messageOf(from: From, fields: MessageFields) {
  const command = fields.text === undefined ? null : /^\/\w+/.exec(fields.text);
  return {
    message_id: fields.messageId ?? nextMessageId++,
    date: 1_700_000_000,
    chat: chatOf(from),
    from: userOf(from),
    ...(fields.text !== undefined ? { text: fields.text } : {}),
    ...(command ? { entities: [{ type: 'bot_command' as const, offset: 0, length: command[0].length }] } : {}),
    ...(fields.caption !== undefined
      ? { caption: fields.caption, photo: [{ file_id: 'photo', file_unique_id: 'photo', width: 90, height: 90 }] }
      : {}),
    ...(fields.forwarded
      ? { forward_origin: { type: 'user', date: 1_699_999_000, sender_user: { id: 4242, is_bot: false, first_name: 'Bob' } } }
      : {}),
  };
}

/** A new message (text, a captioned photo, a forward) in the private chat or, with `groupId`, a group. */
export function messageUpdate(from: From, fields: MessageFields): Update {
  return { update_id: nextUpdateId++, message: messageOf(from, fields) } as Update;
}

/** An edit of message `messageId`, now reading `fields`. */
export function editedMessageUpdate(from: From, messageId: number, fields: MessageFields): Update {
  return {
    update_id: nextUpdateId++,
    edited_message: { ...messageOf(from, { ...fields, messageId }), edit_date: 1_700_000_100 },
  } as Update;
}

/** A post in a channel the bot administers. */
export function channelPostUpdate(channelId: number, text: string): Update {
  return {
    update_id: nextUpdateId++,
    channel_post: { message_id: nextMessageId++, date: 1_700_000_000, chat: { id: channelId, type: 'channel', title: 'Channel' }, text },
  } as Update;
}

/**
 * One update of each Telegram Business kind, as a business account owner chatting with `from` would
 * bring them: the connection, a message (carrying `text`), its edit and its deletion.
 */
export function businessUpdates(from: From, text: string): Update[] {
  const connection = 'biz-1';
  const owner = { id: 5555, is_bot: false, first_name: 'Owner' };
  const message = { ...messageOf(from, { text }), business_connection_id: connection };
  return [
    {
      update_id: nextUpdateId++,
      business_connection: { id: connection, user: owner, user_chat_id: owner.id, date: 1_700_000_000, can_reply: true, is_enabled: true },
    },
    { update_id: nextUpdateId++, business_message: message },
    { update_id: nextUpdateId++, edited_business_message: { ...message, edit_date: 1_700_000_100 } },
    {
      update_id: nextUpdateId++,
      deleted_business_messages: { business_connection_id: connection, chat: message.chat, message_ids: [message.message_id] },
    },
  ] as unknown as Update[];
}
