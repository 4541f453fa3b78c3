import type { Api } from 'grammy';
import type { DepositRequest } from '../card-service/from-core.js';
import { loggableError } from '../../infra/log-safe.js';
import { decisionKeyboard, requestCard, translatorIn } from '../ui/deposit-texts.js';
import type { Services } from '../services.js';

/**
 * The language of messages posted into the admins' chat by something a cardholder did (no admin's
 * Telegram language to follow); an admin's own actions are answered in their language.
 */
export const ADMIN_CHAT_LOCALE = 'en';

/**
 * Posts a new request to the admins' chat with Approve and Reject. Without `ADMIN_CHAT_ID` the request
 * still waits, for the command line (`deposits list`); a post Telegram refuses is logged.
 */
export async function postToAdmins(api: Api, s: Services, request: DepositRequest): Promise<void> {
  const chatId = s.config.adminChatId;
  if (chatId === undefined) {
    s.logger.warn({ requestId: request.id }, 'a deposit request waits with no ADMIN_CHAT_ID to post it to (see `deposits list`)');
    return;
  }
  const t = translatorIn(s.i18n, ADMIN_CHAT_LOCALE);
  await api
    .sendMessage(chatId, requestCard(t, request), { reply_markup: decisionKeyboard(t, request.id) })
    .catch((error: unknown) => s.logger.warn({ err: loggableError(error), requestId: request.id }, 'could not post a deposit request'));
}
