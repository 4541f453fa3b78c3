import { CardServiceError, isCardServiceError } from '../../core/rules/errors.js';
import { defaultCoreSettings } from '../../core/settings.js';
import { cardCoverRefusal, cooldownSecondsLeft, withdrawCooldownRefusal } from '../../core/rules/rules.js';
import { hashToken, type CardDataCipher } from '../../core/keys/secrets.js';
import type { Clock } from '../../infra/clock.js';
import type { Db } from '../../db/schema.js';
import { OutcomeUnknownError, type RemoteCardClient, type RemoteSession, ServiceUnavailableError } from '../../remote/client.js';
import { RemoteRefusal } from '../../remote/refusals.js';
import type { KnownPlan } from '../../remote/known-cards.js';
import type { Side } from '../../remote/tables.js';
import { tokenRefusalConfirmed } from '../../remote/token-refusal.js';
import type { EventOutbox } from '../../core/operations/events.js';
import type { Logger } from '../../infra/logger.js';
import { botChatLinks } from '../store/link-ends.js';
import type { BotDb } from '../store/tables.js';
import { linkTokenContext, sealedTokenLinks, sealedTokenOf } from '../store/sealed-tokens.js';
import { inputRulesOf } from './rules.js';
import type {
  Bin,
  Cents,
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
  TopupBounds,
  TopupQuote,
  TopupResult,
  TransactionsQuery,
  Wallet,
  WithdrawalQuote,
  WithdrawResult,
} from './port.js';

// Over 300 lines: the port over another service is one class (an account per token, every call of the port with
// its refusal read and what the bot must remember on the way: plans, own operations, withdrawal attempts) and its
// composition; splitting the class would only spread one token's calls over files.

/** The cards the bot knows of a remote user: the interface lists none (an extension some services have). */
export interface KnownCards {
  /** `fresh`: a card the bot has just created has no history: its first OTP is pushed however soon it comes. */
  remember(userId: string, cardId: string, options?: { fresh?: boolean }): Promise<void>;
  forget(userId: string, cardId: string): Promise<void>;
  list(userId: string): Promise<string[]>;
  /** What the bot knows of the card's plan (the interface's card record does not say it). */
  planOf(userId: string, cardId: string): Promise<KnownPlan>;
  rememberPlan(userId: string, cardId: string, plan: KnownPlan): Promise<void>;
  /**
   * A top-up, withdrawal or close about to be sent: the watcher pushes no transaction of the card on `side`
   * until it is settled, when its transaction (if any) is marked seen. The user's own operations are not alerts.
   */
  beginOwn(userId: string, cardId: string, side: Side): Promise<string>;
  settleOwn(operationId: string, userId: string, transactionId: string | null): Promise<void>;
  /** A withdrawal or close of the card the service counted, sent at `at`: the next one's wait is told before Confirm. */
  noteWithdrawalAttempt(userId: string, cardId: string, at: Date): Promise<void>;
  /** When the bot last sent a counted withdrawal or close of the card (ISO); undefined when never. */
  withdrawalAttemptOf(userId: string, cardId: string): Promise<string | undefined>;
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

/** Refusals of a withdrawal or close that the service did not count as an attempt (or never received). */
const UNCOUNTED_WITHDRAWAL_REFUSALS = new Set<string>(['WITHDRAW_COOLDOWN', 'SERVICE_UNAVAILABLE', 'INVALID_TOKEN', 'CARD_NOT_FOUND']);

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
    private readonly confirmRefusalMs: number | undefined,
    private readonly clock: Clock,
  ) {
    this.userId = remoteUserIdOf(tokenHash);
    if (offersOtpRequest) this.requestOtp = (cardId) => this.requestOtpByEmail(cardId);
  }

  /**
   * A call to the service, its failure read as a refusal. A 401 is asked about again (the health check): a
   * token refused twice ends the links made with it; one refused once stays linked, and the call is made
   * again if it is a read (`read`), else told as a service that did not answer (nothing was done: the
   * service refused it before acting).
   */
  private async refusing<T>(call: () => Promise<T>, read = false): Promise<T> {
    try {
      return await call();
    } catch (error) {
      const refusal = asRefusal(error);
      if (!(isCardServiceError(refusal) && refusal.code === 'INVALID_TOKEN')) throw refusal;
      if (await tokenRefusalConfirmed(this.session, this.confirmRefusalMs)) {
        await this.onTokenRefused(this.tokenHash);
        throw refusal;
      }
      if (!read) throw new CardServiceError('SERVICE_UNAVAILABLE');
      try {
        return await call();
      } catch (again) {
        const second = asRefusal(again);
        // Refused again right after an answer: not the token's end, but no answer for this tap either.
        throw isCardServiceError(second) && second.code === 'INVALID_TOKEN' ? new CardServiceError('SERVICE_UNAVAILABLE') : second;
      }
    }
  }

  /**
   * A money movement of the user's own: the watcher holds back the card's transactions on `side` while it is
   * under way, and its transaction is marked seen once it is back, so it is not pushed as an alert.
   */
  private async own<T>(cardId: string, side: Side, call: () => Promise<T>, transactionOf: (result: T) => string | null): Promise<T> {
    const operationId = await this.known.beginOwn(this.userId, cardId, side);
    let transactionId: string | null = null;
    try {
      const result = await this.refusing(call);
      transactionId = transactionOf(result);
      return result;
    } finally {
      await this.known.settleOwn(operationId, this.userId, transactionId);
    }
  }

  /** The card with what the bot knows of its plan: the limit and plan on every view, the fee taken while it is issued. */
  private async withPlan(card: Card): Promise<Card> {
    const plan = await this.known.planOf(this.userId, card.id);
    return {
      ...card,
      ...(plan.planId === undefined ? {} : { planId: plan.planId }),
      ...(plan.limit === undefined ? {} : { limit: plan.limit }),
      ...(card.status === 'processing' && plan.creationFee !== undefined ? { heldFee: plan.creationFee } : {}),
    };
  }

  walletBalance(): Promise<Wallet> {
    return this.refusing(() => this.session.walletBalance(), true);
  }
  listBins(): Promise<Bin[]> {
    return this.refusing(() => this.session.listBins(), true);
  }
  listPlans(): Promise<Plan[]> {
    return this.refusing(() => this.session.listPlans(), true);
  }
  /** The service's list when it has one; else the cards the bot knows (created here, seen in transactions, added by id). */
  async listCards(): Promise<Card[]> {
    const listed = await this.refusing(() => this.session.listCards(), true);
    if (listed !== undefined) {
      const cards: Card[] = [];
      for (const card of listed) {
        await this.known.remember(this.userId, card.id);
        cards.push(await this.withPlan(card));
      }
      return cards;
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
      const card = await this.refusing(() => this.session.getCard(cardId), true);
      await this.known.remember(this.userId, card.id);
      return await this.withPlan(card);
    } catch (error) {
      // A card the service calls not found is forgotten.
      if (isCardServiceError(error) && error.code === 'CARD_NOT_FOUND') await this.known.forget(this.userId, cardId);
      throw error;
    }
  }
  getSensitiveDetails(cardId: string): Promise<SensitiveCardDetails> {
    return this.refusing(() => this.session.details(cardId), true);
  }
  /** The interface quotes no creation: the bot shows the plan's fee against the wallet instead. */
  async quoteCreateCard(): Promise<undefined> {
    return undefined;
  }
  /**
   * The card is created; what the bot learns of it on the way is remembered, since the service's card record
   * does not say it: its plan and limit, and the fee the service took (the wallet before and after, when
   * that is no more than the plan's fee: another movement at once leaves it unknown).
   */
  async createCard(input: CreateCardInput): Promise<Card> {
    const plan = (await this.listPlans().catch(() => [])).find((p) => p.id === input.planId);
    const walletBefore = await this.walletBalance().catch(() => undefined);
    const created = await this.refusing(() =>
      this.session.createCard({
        binId: input.bin_id,
        name: input.name,
        planId: input.planId,
        ...(input.coupon_id ? { couponId: input.coupon_id } : {}),
      }),
    );
    await this.known.remember(this.userId, created.id, { fresh: true });
    const walletAfter = walletBefore === undefined ? undefined : await this.walletBalance().catch(() => undefined);
    const taken = walletBefore === undefined || walletAfter === undefined ? undefined : walletBefore.balance - walletAfter.balance;
    const fee = taken !== undefined && taken >= 0 && (plan === undefined || taken <= plan.creationFee) ? taken : undefined;
    await this.known.rememberPlan(this.userId, created.id, {
      planId: input.planId,
      ...(plan === undefined ? {} : { limit: plan.limit }),
      ...(fee === undefined ? {} : { creationFee: fee }),
    });
    // The creation result is not a whole card (the current shape): the card as the service now shows it.
    try {
      return await this.getCard(created.id);
    } catch {
      return this.withPlan({
        id: created.id,
        name: input.name,
        maskedPan: '',
        balance: created.balance,
        status: created.status,
        category: created.category,
        currency: 'USD',
      });
    }
  }
  /**
   * The service's quote when it has our extension (a read: no attempt counted); else the bounds of the
   * card's plan as the bot knows it, so an amount over the card's room is refused before anything is sent.
   */
  async quoteTopup(cardId: string, input: { amount: number }): Promise<TopupQuote | TopupBounds | undefined> {
    const quoted = await this.refusing(() => this.session.quoteTopup(cardId, input.amount), true);
    return quoted ?? (await this.topupBounds(cardId, input.amount));
  }
  /**
   * The room the card's plan leaves (its limit less its deposit, the spec's rule 4.6.2; the balance where the
   * service gives no deposit). A card whose plan the bot does not know is bounded by the highest plan's
   * limit, and the bounds say so.
   */
  private async topupBounds(cardId: string, amount: Cents): Promise<TopupBounds> {
    const card = await this.getCard(cardId);
    const deposit = card.deposit ?? card.balance;
    const limitUnknown = card.limit === undefined;
    const limits = limitUnknown ? (await this.listPlans()).map((p) => p.limit) : [card.limit!];
    if (limits.length === 0) return { feeUnknown: true, limitUnknown: true };
    const limit = Math.max(...limits);
    const depositAvailable = Math.max(0, limit - deposit);
    return {
      feeUnknown: true,
      depositAvailable,
      maxAmount: depositAvailable,
      ...(limitUnknown ? { limitUnknown: true } : {}),
      ...(amount > depositAvailable
        ? { refusal: new CardServiceError('CARD_LIMIT_EXCEEDED', { deposit, limit, available: depositAvailable }).toPlain() }
        : {}),
    };
  }
  async topup(cardId: string, input: { amount: number }): Promise<TopupResult> {
    try {
      return await this.own(
        cardId,
        'Credit',
        () => this.session.topup(cardId, input.amount),
        (r) => r.transactionId,
      );
    } catch (error) {
      // The service said the card's limit: remembered, so the next top-up is bounded by it.
      if (isCardServiceError(error) && error.code === 'CARD_LIMIT_EXCEEDED') {
        const { limit } = error.params as { limit: Cents };
        await this.known.rememberPlan(this.userId, cardId, { limit }).catch(() => undefined);
      }
      throw error;
    }
  }
  /**
   * The interface quotes no withdrawal: the card's balance caps what is asked, and the spec's cooldown
   * between withdrawals and closures (4.7, 4.11) is counted from the last one the bot sent that the service
   * counted. One made elsewhere is not known here: the service refuses it after Confirm.
   */
  async quoteWithdrawal(cardId: string, input?: { amount: Cents }): Promise<WithdrawalQuote> {
    const card = await this.getCard(cardId);
    const lastAttempt = (await this.known.withdrawalAttemptOf(this.userId, cardId)) ?? null;
    const now = this.clock.now();
    const refusal =
      withdrawCooldownRefusal(lastAttempt, defaultCoreSettings, now) ??
      (input === undefined ? undefined : cardCoverRefusal({ amount: input.amount, available: card.balance }));
    return {
      cardBalance: card.balance,
      maxAmount: Math.min(defaultCoreSettings.withdrawMax, card.balance),
      cooldownSeconds: cooldownSecondsLeft(lastAttempt, defaultCoreSettings.withdrawCooldownSeconds, now),
      ...(refusal && { refusal: refusal.toPlain() }),
    };
  }
  withdraw(cardId: string, input: { amount: number }): Promise<WithdrawResult> {
    return this.withdrawalAttempt(cardId, () =>
      this.own(
        cardId,
        'Debit',
        () => this.session.withdraw(cardId, input.amount),
        (r) => r.transactionId,
      ),
    );
  }
  /**
   * A withdrawal or close, remembered as sent when the service may have counted it: not when it refused it for
   * the cooldown (an attempt inside the cooldown does not start it again), nor when it never got it.
   */
  private async withdrawalAttempt<T>(cardId: string, call: () => Promise<T>): Promise<T> {
    const sentAt = this.clock.now();
    let counted = true;
    try {
      return await call();
    } catch (error) {
      counted = !(isCardServiceError(error) && UNCOUNTED_WITHDRAWAL_REFUSALS.has(error.code));
      throw error;
    } finally {
      if (counted) await this.known.noteWithdrawalAttempt(this.userId, cardId, sentAt).catch(() => undefined);
    }
  }
  freeze(cardId: string): Promise<StatusChange> {
    return this.refusing(() => this.session.freeze(cardId));
  }
  unfreeze(cardId: string): Promise<StatusChange> {
    return this.refusing(() => this.session.unfreeze(cardId));
  }
  /** Spec 4.11: the balance left goes back to the wallet, a debit of the card (its transaction id null when there was none). */
  close(cardId: string): Promise<CloseResult> {
    return this.withdrawalAttempt(cardId, () =>
      this.own(
        cardId,
        'Debit',
        () => this.session.close(cardId),
        (r) => r.transactionId,
      ),
    );
  }
  async listTransactions(query: TransactionsQuery): Promise<Page<CardTransaction>> {
    const page = await this.refusing(
      () =>
        this.session.listTransactions({
          ...(query.page === undefined ? {} : { page: query.page }),
          ...(query.limit === undefined ? {} : { limit: query.limit }),
          ...(query.card_id === undefined ? {} : { cardId: query.card_id }),
        }),
      true,
    );
    // Card ids seen in the user's transactions are cards the bot now knows.
    for (const id of new Set(page.data.map((t) => t.cardId))) await this.known.remember(this.userId, id);
    return page;
  }
  listOtps(cardId: string): Promise<OtpList> {
    return this.refusing(() => this.session.listOtps(cardId), true);
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
  /** How long after a 401 the token is asked about again before its links end (`tokenRefusalConfirmed`'s default). */
  confirmRefusalMs?: number;
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
    new RemoteAccount(
      token,
      hashToken(token),
      client.as(token),
      known,
      onTokenRefused,
      client.capabilities().otpRequest !== 'absent',
      deps.confirmRefusalMs,
      clock,
    );

  return {
    mode: 'remote',
    rules,
    /** The spec's health check takes the token for exactly this. */
    async checkToken(token) {
      try {
        await client.as(token).checkToken();
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

/**
 * The users linked to the remote service, a token of each (read from their chats' sealed links) and when the
 * newest of their links was made (a token refused before and linked since is polled again).
 */
export async function linkedRemoteUsers(
  db: Db,
  cipher: Pick<CardDataCipher, 'decrypt'>,
  logger: Logger,
): Promise<{ userId: string; token: string; linkedAt: string }[]> {
  const users = new Map<string, { token: string; linkedAt: string }>();
  for (const { chatId, userId, sealed, linkedAt } of await sealedTokenLinks(db as unknown as BotDb)) {
    const known = users.get(userId);
    if (known) {
      known.linkedAt = linkedAt;
      continue;
    }
    try {
      users.set(userId, { token: cipher.decrypt(sealed, linkTokenContext(chatId)), linkedAt });
    } catch (error) {
      logger.error({ chatId, reason: (error as Error).message }, 'a linked token could not be opened; that chat is not polled');
    }
  }
  return [...users].map(([userId, user]) => ({ userId, ...user }));
}
