import type { Context } from 'grammy';
import type { Db } from '../db/schema.js';
import type { CardAccount, CardServicePort, SensitiveCardDetails } from './card-service/port.js';
import { isCardServiceError } from './card-service/from-core.js';
import { findLink } from './store/chat-links.js';
import { botTables } from './store/tables.js';
import { createI18n } from './ui/i18n.js';
import { consumeWebAppNonce } from './webapp-nonces.js';

/** Which of the bot's checks refused the details: logged at debug by the route, never told. */
export type WebAppDetailsRefusal = 'nonce' | 'link' | 'token' | 'card' | 'service';

export interface WebAppBotSideDeps {
  /**
   * The card service as the bot reaches it (its port): the embedded core, or in remote mode the service at
   * `CARD_SERVICE_URL`, whose sensitive-details call (spec 4.10) the page's details come from.
   */
  cards: Pick<CardServicePort, 'account'>;
  db: Db;
}

/** What the card-details Mini App (served by the HTTP API, `src/api/webapp.ts`) takes from the bot. */
export interface WebAppBotSide {
  /**
   * The card a Details button's `nonce` was drawn for, when it was drawn for `telegramUserId`, is unused and
   * unexpired (it is used up here, once), the chat is still linked with the same token, the token still
   * works and the card is its user's; else which check refused.
   */
  cardDetails(
    nonce: string,
    telegramUserId: number,
    now: Date,
  ): Promise<{ details: SensitiveCardDetails } | { refused: WebAppDetailsRefusal }>;
  /** The bot's texts (`locales/*.ftl`) in `locale`. */
  translate(locale: string, key: string, variables?: Record<string, string>): string;
}

/**
 * The bot's side of the card-details Mini App: its nonces, its chat links and its card service decide
 * whose details are shown, its locales what the page says. The composition root passes it to the HTTP API.
 *
 * @example
 * const webApp = webAppBotSide({ cards, db });
 * createHttpServer({ core, db, logger, clock, webApp: { url, botToken, showSeconds: 60, bot: webApp } });
 */
export function webAppBotSide({ cards, db }: WebAppBotSideDeps): WebAppBotSide {
  const i18n = createI18n<Context>();
  return {
    async cardDetails(nonce, telegramUserId, now) {
      const binding = await consumeWebAppNonce(db, nonce, telegramUserId, now);
      if (!binding) return { refused: 'nonce' };
      const link = await findLink(botTables(db), binding.chatId);
      if (!link || link.tokenHash !== binding.tokenHash) return { refused: 'link' };
      let account: CardAccount;
      try {
        account = await cards.account({ tokenHash: link.tokenHash, chatId: binding.chatId });
      } catch (error) {
        if (isCardServiceError(error) && error.code === 'INVALID_TOKEN') return { refused: 'token' };
        throw error;
      }
      try {
        return { details: await account.getSensitiveDetails(binding.cardId) };
      } catch (error) {
        if (!isCardServiceError(error)) throw error;
        // A remote service checks the token only now; and it may not answer.
        if (error.code === 'INVALID_TOKEN') return { refused: 'token' };
        if (error.code === 'SERVICE_UNAVAILABLE') return { refused: 'service' };
        return { refused: 'card' };
      }
    },
    translate: (locale, key, variables) => i18n.t(locale, key, variables),
  };
}
