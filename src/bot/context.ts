import type { ConversationFlavor } from '@grammyjs/conversations';
import type { I18nFlavor } from '@grammyjs/i18n';
import type { Context } from 'grammy';
import type { CardAccount } from './card-service/port.js';
import type { Logger } from '../infra/logger.js';
import type { ChatLink } from './store/chat-links.js';
import type { ChatRecord } from './store/chat-record.js';

interface UpdateData {
  /** A child logger carrying the update id. */
  logger: Logger;
  /** A private chat's link and conversation state as this update found them (read once, in one statement). */
  chatRecord?: ChatRecord;
  /** The chat's link and the account it stands for, when the chat is linked and the token still valid. */
  link?: ChatLink;
  account?: CardAccount;
}

/** The context of the outside middleware tree: every plugin's flavour stacked once. */
export type BotContext = ConversationFlavor<Context & I18nFlavor & UpdateData>;

/** The context inside conversations: fresh per replay, with i18n installed as a conversation plugin. */
export type ConversationContext = Context & I18nFlavor;
