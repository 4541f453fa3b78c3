import { CardServiceError, isCardServiceError } from '../../core/rules/errors.js';
import { defaultCoreSettings } from '../../core/settings.js';
import { hashToken, type CardDataCipher } from '../../core/keys/secrets.js';
import type { Clock } from '../../infra/clock.js';
import type { Db } from '../../db/schema.js';
import { OutcomeUnknownError, type RemoteCardClient, type RemoteSession, ServiceUnavailableError } from '../../remote/client.js';
import { RemoteRefusal } from '../../remote/refusals.js';
import type { EventOutbox } from '../../core/operations/events.js';
import type { Logger } from '../../infra/logger.js';
import { botChatLinks } from '../store/link-ends.js';
import type { BotDb } from '../store/tables.js';
import { linkTokenContext, sealedTokenLinks, sealedTokenOf } from '../store/sealed-tokens.js';
import { inputRulesOf } from './rules.js';
import type {
  Bin,
  Card,
  CardAccount,
  CardServicePort,
  CardTransaction,
  CloseResult,
  CreateCardInput,
  LinkedToken,
  OtpList,
  Page,
  Plan,
  RequestedOtp,
  SensitiveCardDetails,
  StatusChange,
  TopupQuote,
  TopupResult,
  TransactionsQuery,
  Wallet,
  WithdrawResult,
} from './port.js';

/** The cards the bot knows of a remote user: the interface lists none (an extension some services have). */
export interface KnownCards {
  /** `fresh`: a card the bot has just created has no history: its first OTP is pushed however soon it comes. */
  remember(userId: string, cardId: string, options?: { fresh?: boolean }): Promise<void>;
  forget(userId: string, cardId: string): Promise<void>;
  list(userId: string): Promise<string[]>;
}

/** A remote user, as the bot's tables name them: one per token (the service's own ids are not shown to us). */
export const remoteUserIdOf = (tokenHash: string) => `remote:${tokenHash.slice(0, 32)}`;

/**
 * What the client throws, as the bot reads refusals: a refusal of ours as it is, words we do not know as
 * the service wrote them, a service that did not answer, a movement whose outcome is unknown.
 */
function asRefusal(error: unknown): unknown {
  if (isCardServiceError(error)) return error;
  if (error instanceof RemoteRefusal) return new CardServiceError('SERVICE_REFUSED', { text: error.message });
  if (error instanceof ServiceUnavailableError) return new CardServiceError('SERVICE_UNAVAILABLE');
  if (error instanceof OutcomeUnknownError) return new CardServiceError('OUTCOME_UNKNOWN');
  return error;
}

/** One user's calls to the service, with their token. */
class RemoteAccount implements CardAccount {
  readonly userId: string;
  /** Present until the service is found not to offer the OTP-e-mail request (spec 4.14; some services lack it). */
  readonly requestOtp?: (cardId: string) => Promise<RequestedOtp | undefined>;
  constructor(
    /** The token the calls are made with (never logged; the composition root's watcher takes a new user with it). */
    readonly token: string,
    private readonly tokenHash: string,
    private readonly session: RemoteSession,
    private readonly known: KnownCards,
    private readonly onTokenRefused: (tokenHash: string) => Promise<void>,
    offersOtpRequest: boolean,
  ) {
    this.userId = remoteUserIdOf(tokenHash);
    if (offersOtpRequest) this.requestOtp = (cardId) => this.requestOtpByEmail(cardId);
  }

  /** A call to the service, its failure read as a refusal; a refused token ends the links made with it. */
  private async refusing<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      const refusal = asRefusal(error);
      if (isCardServiceError(refusal) && refusal.code === 'INVALID_TOKEN') await this.onTokenRefused(this.tokenHash);
      throw refusal;
    }
  }

  walletBalance(): Promise<Wallet> {
    return this.refusing(() => this.session.walletBalance());
  }
  listBins(): Promise<Bin[]> {
    return this.refusing(() => this.session.listBins());
  }
  listPlans(): Promise<Plan[]> {
    return this.refusing(() => this.session.listPlans());
  }
  /** The service's list when it has one; else the cards the bot knows (created here, seen in transactions, added by id). */
  async listCards(): Promise<Card[]> {
    const listed = await this.refusing(() => this.session.listCards());
    if (listed !== undefined) {
      for (const card of listed) await this.known.remember(this.userId, card.id);
      return listed;
    }
    const cards: Card[] = [];
    for (const id of await this.known.list(this.userId)) {
      try {
        cards.push(await this.getCard(id));
      } catch (error) {
        if (!(isCardServiceError(error) && error.code === 'CARD_NOT_FOUND')) throw error;
      }
    }
    return cards;
  }
  async getCard(cardId: string): Promise<Card> {
    try {
      const card = await this.refusing(() => this.session.getCard(cardId));
      await this.known.remember(this.userId, card.id);
      return card;
    } catch (error) {
      // A card the service calls not found is forgotten.
      if (isCardServiceError(error) && error.code === 'CARD_NOT_FOUND') await this.known.forget(this.userId, cardId);
      throw error;
    }
  }
  getSensitiveDetails(cardId: string): Promise<SensitiveCardDetails> {
    return this.refusing(() => this.session.details(cardId));
  }
  /** The interface quotes no creation: the bot shows the plan's fee against the wallet instead. */
  async quoteCreateCard(): Promise<undefined> {
    return undefined;
  }
  async createCard(input: CreateCardInput): Promise<Card> {
    const created = await this.refusing(() =>
      this.session.createCard({
        binId: input.bin_id,
        name: input.name,
        planId: input.planId,
        ...(input.coupon_id ? { couponId: input.coupon_id } : {}),
      }),
    );
    await this.known.remember(this.userId, created.id, { fresh: true });
    // The creation result is not a whole card (the current shape): the card as the service now shows it.
    try {
      return await this.getCard(created.id);
    } catch {
      return {
        id: created.id,
        name: input.name,
        maskedPan: '',
        balance: created.balance,
        status: created.status,
        category: created.category,
        currency: 'USD',
      };
    }
  }
  quoteTopup(cardId: string, input: { amount: number }): Promise<TopupQuote | undefined> {
    return this.refusing(() => this.session.quoteTopup(cardId, input.amount));
  }
  topup(cardId: string, input: { amount: number }): Promise<TopupResult> {
    return this.refusing(() => this.session.topup(cardId, input.amount));
  }
  /** The interface quotes no withdrawal: the card's balance caps what is asked. */
  async quoteWithdrawal(): Promise<undefined> {
    return undefined;
  }
  withdraw(cardId: string, input: { amount: number }): Promise<WithdrawResult> {
    return this.refusing(() => this.session.withdraw(cardId, input.amount));
  }
  freeze(cardId: string): Promise<StatusChange> {
    return this.refusing(() => this.session.freeze(cardId));
  }
  unfreeze(cardId: string): Promise<StatusChange> {
    return this.refusing(() => this.session.unfreeze(cardId));
  }
  close(cardId: string): Promise<CloseResult> {
    return this.refusing(() => this.session.close(cardId));
  }
  async listTransactions(query: TransactionsQuery): Promise<Page<CardTransaction>> {
    const page = await this.refusing(() =>
      this.session.listTransactions({
        ...(query.page === undefined ? {} : { page: query.page }),
        ...(query.limit === undefined ? {} : { limit: query.limit }),
        ...(query.card_id === undefined ? {} : { cardId: query.card_id }),
      }),
    );
    // Card ids seen in the user's transactions are cards the bot now knows.
    for (const id of new Set(page.data.map((t) => t.cardId))) await this.known.remember(this.userId, id);
    return page;
  }
  listOtps(cardId: string): Promise<OtpList> {
    return this.refusing(() => this.session.listOtps(cardId));
  }
  private async requestOtpByEmail(cardId: string): Promise<RequestedOtp | undefined> {
    const requested = await this.refusing(() => this.session.requestOtp(cardId));
    if (requested === undefined) return undefined;
    return { message: requested.message, ...(requested.code ? { cardInfo: { otpCode: requested.code } } : {}) };
  }
}

export interface RemoteCardServiceDeps {
  client: RemoteCardClient;
  /** The outbox the watcher (src/remote/watch.ts) records new OTPs and transactions in, pushed like ours. */
  events?: EventOutbox;
  /** Watches a card closely for a while ("waiting for a code"): the watcher's. */
  watch?: (userId: string, cardId: string) => Promise<void>;
  /** Told when a chat is linked, before the chat is: the user's pushes are made ready and its history taken as such. */
  onLinked?: (userId: string, token: string) => Promise<void>;
  /** The bot's database: the links' sealed tokens are read from it. */
  db: Db;
  clock: Clock;
  logger: Logger;
  /** The card-data key: seals each link's token, bound to its chat. */
  cipher: Pick<CardDataCipher, 'encrypt' | 'decrypt'>;
  known: KnownCards;
}

/**
 * The card service as another service that speaks the interface (remote mode, `CARD_SERVICE_URL`): every
 * call an HTTP request with the chat's own token, kept sealed in the chat's link. Nothing of ours that the
 * interface lacks (funding, events of the service's own) is offered; the input rules are the spec's.
 *
 * @example
 * const cards = remoteCardService({ client: createRemoteCardClient({ baseUrl, timeoutMs }), db, cipher, known });
 * const account = await cards.checkToken(token);
 */
export function remoteCardService(deps: RemoteCardServiceDeps): CardServicePort {
  const { client, db, clock, logger, cipher, known, events, watch, onLinked } = deps;
  const rules = inputRulesOf(defaultCoreSettings);
  const bot = db as unknown as BotDb;
  // A token the service refuses ends every link made with it, in one transaction; each chat is told once (bot_notices).
  const onTokenRefused = async (tokenHash: string) => {
    const chats = await db.transaction().execute((trx) => botChatLinks.endForTokens(trx, [tokenHash], clock.now().toISOString()));
    if (chats.length > 0) logger.warn({ chats: chats.length }, 'the card service refused a linked token: its chats are unlinked and told');
  };
  const accountFor = (token: string) =>
    new RemoteAccount(token, hashToken(token), client.as(token), known, onTokenRefused, client.capabilities().otpRequest !== 'absent');

  return {
    mode: 'remote',
    rules,
    /** The spec's health check takes the token for exactly this. */
    async checkToken(token) {
      try {
        await client.as(token).health();
      } catch (error) {
        throw asRefusal(error);
      }
      return accountFor(token);
    },
    sealToken: (token, chatId) => cipher.encrypt(token, linkTokenContext(chatId)),
    async account(link: LinkedToken) {
      if (link.chatId === undefined) throw new CardServiceError('INVALID_TOKEN');
      const sealed = await sealedTokenOf(bot, link.chatId, link.tokenHash);
      if (sealed === undefined) throw new CardServiceError('INVALID_TOKEN');
      return accountFor(cipher.decrypt(sealed, linkTokenContext(link.chatId)));
    },
    // The watcher ends a link whose token the service refuses; until then a push goes out.
    tokenIsActive: async () => true,
    ...(events ? { events } : {}),
    ...(watch ? { watchCard: (account: CardAccount, cardId: string) => watch(account.userId, cardId) } : {}),
    ...(onLinked ? { linked: (account: CardAccount) => onLinked(account.userId, (account as RemoteAccount).token) } : {}),
  };
}

/** The users linked to the remote service and a token of each (read from their chats' sealed links). */
export async function linkedRemoteUsers(
  db: Db,
  cipher: Pick<CardDataCipher, 'decrypt'>,
  logger: Logger,
): Promise<{ userId: string; token: string }[]> {
  const users = new Map<string, string>();
  for (const link of await sealedTokenLinks(db as unknown as BotDb)) {
    if (users.has(link.userId)) continue;
    try {
      users.set(link.userId, cipher.decrypt(link.sealed, linkTokenContext(link.chatId)));
    } catch (error) {
      logger.error(
        { chatId: link.chatId, reason: (error as Error).message },
        'a linked token could not be opened; that chat is not polled',
      );
    }
  }
  return [...users].map(([userId, token]) => ({ userId, token }));
}
