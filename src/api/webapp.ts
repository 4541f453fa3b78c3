import { validate } from '@telegram-apps/init-data-node';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { SensitiveCardDetails } from '../core/operations/views.js';
import type { Clock } from '../infra/clock.js';
import type { Logger } from '../infra/logger.js';
import { failure, ok } from './envelope.js';
import { webAppPage, type WebAppPageTexts } from './webapp-page.js';

/** The Mini App settings: `WEBAPP_URL` and the bot's token (init data is signed with it). */
export interface WebAppOptions {
  /** `WEBAPP_URL`: its path serves the page, `<path>/card-details` the details. */
  url: string;
  botToken: string;
  /** How long the page shows the details before it blanks them (`SENSITIVE_TTL_SECONDS`). */
  showSeconds: number;
  /** Init data signed longer ago than this is refused. Default 5 minutes. */
  maxAgeSeconds?: number;
}

/**
 * What the Mini App takes from the bot, whose feature it is (`src/bot/webapp.ts`, passed in by the
 * composition root): whose card a nonce shows, and the page's texts.
 */
export interface WebAppFromBot {
  /** Uses up `nonce` for `telegramUserId`: the card's details, or which of the bot's checks refused. */
  cardDetails(nonce: string, telegramUserId: number, now: Date): Promise<{ details: CardDetailsShown } | { refused: string }>;
  /** The bot's texts (`locales/*.ftl`) in `locale`. */
  translate(locale: string, key: string, variables?: Record<string, string>): string;
}

type CardDetailsShown = Pick<SensitiveCardDetails, 'name' | 'pan' | 'cvv' | 'exp'>;

export interface WebAppDeps extends WebAppOptions {
  bot: WebAppFromBot;
  clock: Clock;
  logger: Logger;
}

const DEFAULT_MAX_AGE_SECONDS = 300;
/** A client clock this far ahead of ours still passes (auth_date is set by Telegram's servers, but ours may lag). */
const CLOCK_SKEW_SECONDS = 60;
/** The one answer to every refusal: which check failed is logged at debug, never told. */
const UNAVAILABLE = 'Card details are not available';

const detailsRequest = z.strictObject({
  initData: z.string().min(1).max(8192),
  nonce: z.string().regex(/^[\w-]{20,100}$/),
});

const telegramUser = z.looseObject({ id: z.number().int().positive() });

/** Every reply of both routes, refusals and faults included: never kept, never referred, never sniffed. */
const PRIVATE_HEADERS = {
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

/**
 * The card-details Mini App: `GET <path of WEBAPP_URL>` serves the page, `POST <path>/card-details`
 * takes `{ initData, nonce }` and answers the card's number, CVV and expiry when the init data is
 * Telegram's (signed with the bot's token, at most `maxAgeSeconds` old), its user is the one the nonce
 * was drawn for, the nonce is unused and unexpired (it is used up here, once), the chat is still linked
 * with the same token, the token still works and the card is its user's. Anything else gets the same
 * 403. Both routes are public (no bearer token): the init data authenticates.
 *
 * @example
 * webAppRoutes(api, { bot: webAppBotSide({ cards, db }), clock, logger, url: 'https://cards.example/webapp', botToken, showSeconds: 60 });
 */
export function webAppRoutes(app: FastifyInstance, deps: WebAppDeps): void {
  const path = new URL(deps.url).pathname;
  const endpoint = `${path.replace(/\/$/, '')}/card-details`;
  const page = webAppPage({ endpoint, texts: pageTexts(deps.bot.translate) });
  const setPrivateHeaders = async (_request: FastifyRequest, reply: FastifyReply) => {
    void reply.headers(PRIVATE_HEADERS);
  };
  const config = { public: true };

  app.get(path, { config, schema: { hide: true }, onRequest: setPrivateHeaders }, async (_request, reply) =>
    reply.header('content-security-policy', page.contentSecurityPolicy).type('text/html; charset=utf-8').send(page.html),
  );

  app.post(endpoint, { config, schema: { hide: true }, onRequest: setPrivateHeaders }, async (request, reply) => {
    void reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
    const outcome = await cardDetails(request.body, deps);
    if ('refused' in outcome) {
      // Never the init data or the nonce: only which check failed.
      deps.logger.debug({ reqId: request.id, check: outcome.refused }, 'Mini App card details refused');
      return reply.code(403).send(failure(UNAVAILABLE, deps.clock.now()));
    }
    const { details } = outcome;
    const data = { name: details.name, number: details.pan, cvv: details.cvv, expiry: details.exp, showSeconds: deps.showSeconds };
    return ok(data, 'Card details', deps.clock.now());
  });
}

/**
 * The checks, in order (the request, its signature, its age, its user, then the bot's); the first that fails
 * names the refusal, logged at debug so an operator can tell; the caller is told nothing.
 */
async function cardDetails(body: unknown, deps: WebAppDeps): Promise<{ details: CardDetailsShown } | { refused: string }> {
  const input = detailsRequest.safeParse(body);
  if (!input.success) return { refused: 'request' };
  const { initData, nonce } = input.data;
  try {
    // The age is checked below against our clock; the library would read the system's.
    validate(initData, deps.botToken, { expiresIn: 0 });
  } catch {
    return { refused: 'signature' };
  }
  const signed = new URLSearchParams(initData);
  const now = deps.clock.now();
  const ageSeconds = now.getTime() / 1000 - Number(signed.get('auth_date'));
  if (!(ageSeconds <= (deps.maxAgeSeconds ?? DEFAULT_MAX_AGE_SECONDS) && ageSeconds >= -CLOCK_SKEW_SECONDS)) return { refused: 'age' };
  const user = telegramUser.safeParse(parseJson(signed.get('user')));
  if (!user.success) return { refused: 'user' };
  return deps.bot.cardDetails(nonce, user.data.id, now);
}

function parseJson(text: string | null): unknown {
  try {
    return text === null ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The page's texts from `locales/*.ftl`, in English and Russian (picked on the page by the user's Telegram language). */
function pageTexts(translate: WebAppFromBot['translate']): { en: WebAppPageTexts; ru: WebAppPageTexts } {
  const inLocale = (locale: string): WebAppPageTexts => {
    const t = (key: string, variables?: Record<string, string>) => translate(locale, key, variables);
    return {
      title: t('webapp-title'),
      checking: t('webapp-checking'),
      number: t('details-number'),
      cvv: t('details-cvv'),
      expiry: t('details-expiry'),
      copy: t('webapp-copy'),
      copied: t('webapp-copied'),
      countdown: t('webapp-countdown', { seconds: '%s' }),
      hidden: t('webapp-hidden'),
      unavailable: t('webapp-unavailable'),
    };
  };
  return { en: inLocale('en'), ru: inLocale('ru') };
}
