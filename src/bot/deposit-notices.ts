import type { Api } from 'grammy';
import type { DepositRequest } from '../core/deposits.js';
import type { Cents } from '../core/money.js';
import { loggableError } from '../log-safe.js';
import { decisionKeyboard, reasonFor, requestCard, translatorIn } from './deposit-texts.js';
import { localMoney } from './format.js';
import { chatLocaleKey, readKv } from './repository.js';
import type { Services } from './services.js';

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

/**
 * Tells the chat a request came from how it was decided, in the language the chat was linked in; only
 * while that chat is still linked, with a valid token, to the request's user (the money is theirs to hear of).
 */
export async function tellCardholder(api: Api, s: Services, request: DepositRequest, walletBalance?: Cents): Promise<void> {
  const chatId = request.chatId;
  if (chatId === null) return;
  const link = await s.links.find(chatId);
  if (!link || link.userId !== request.userId || !(await s.core.tokenIsActive(link.tokenHash))) return;
  const t = translatorIn(s.i18n, (await readKv(s.db, chatLocaleKey(chatId))) ?? 'en');
  const amount = localMoney(request.amount);
  const text =
    request.status === 'approved'
      ? t('deposit-approved', { id: String(request.id), amount, balance: localMoney(walletBalance ?? 0) })
      : t('deposit-rejected', {
          id: String(request.id),
          amount,
          reason: reasonFor(t, translatorIn(s.i18n, 'en'), request.reason ?? ''),
        });
  await api
    .sendMessage(chatId, text)
    .catch((error: unknown) => s.logger.warn({ err: loggableError(error), requestId: request.id }, 'could not tell a deposit decision'));
}
