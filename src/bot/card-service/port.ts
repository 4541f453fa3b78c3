import type { ZodType } from 'zod';
import type * as promised from '../../interface/objects.js';
import type {
  Bin,
  CardTransaction,
  Cents,
  CloseResult,
  CreateCardInput,
  Page,
  RequestedOtp,
  SensitiveCardDetails,
  StatusChange,
  TopupResult,
  TransactionsQuery,
  Wallet,
  WithdrawResult,
} from '../../interface/objects.js';
import type { AutoTopup, AutoTopupInput, CardControlsView, ControlsInput, EventOutbox, Funding, ours, QuotedRefusal } from './from-core.js';
import type { AnsweredChallenge, ChallengeAnswer } from '../../core/operations/challenges.js';

export type { AnsweredChallenge, Challenge, ChallengeAnswer } from '../../core/operations/challenges.js';

/**
 * The one way the bot reaches the card service: `CardServicePort`, with an account per linked chat.
 * Two implementations: the embedded core (./embedded.ts) and another service's `/api/v1` (./remote.ts, remote
 * mode). The views below are what the bot reads; the core's own objects fit them as they are, and a remote service
 * fills them from its replies, so what the interface does not promise is optional here: they are the
 * interface's objects (src/interface/objects.ts), with what only the core's views add left optional.
 */

/** The interface's objects as it declares them, but for those declared below (a module's own exports come before `export *`). */
export type * from '../../interface/objects.js';

/**
 * An object as the interface promises it, with the fields `K` that only our core adds to it (its view's)
 * optional: the embedded core fills them, a remote service leaves them out.
 */
type WithOurs<Promised, Ours extends Promised, K extends Exclude<keyof Ours, keyof Promised>> = Promised & Partial<Pick<Ours, K>>;

export type Card = WithOurs<
  promised.Card,
  ours.Card,
  'number' | 'limit' | 'planId' | 'heldFee' | 'providerReady' | 'type' | 'controls' | 'spentToday' | 'spentThisMonth' | 'autoTopup'
>;
export type Plan = WithOurs<promised.Plan, ours.Plan, 'active'>;
export type CardOtp = WithOurs<promised.CardOtp, ours.CardOtp, 'merchantName'>;

export interface OtpList extends promised.OtpList {
  otps: CardOtp[];
}

/**
 * A top-up's fee before confirming; the rest only from a service that says more (ours, whose category may be
 * any the service names). The refusal is absent when the top-up would pass or the service does not say.
 */
export type TopupQuote = Pick<ours.TopupQuote, 'platformFee' | 'totalCharged'> &
  Partial<Omit<ours.TopupQuote, 'cardId' | 'category' | 'platformFee' | 'totalCharged'>> & { category?: string };

/**
 * What a card can take, from a service that quotes no fee (remote mode without our quote extension): the
 * bot's own bounds from the card's plan (its limit less its deposit), so an amount the service would refuse
 * is refused before anything is sent. The fee is known only once the top-up is done.
 */
export interface TopupBounds {
  feeUnknown: true;
  /** How much more the card's plan allows to be deposited; absent when nothing bounds it. */
  depositAvailable?: Cents;
  maxAmount?: Cents;
  /**
   * The card's plan is not known to the bot (a card it did not create): the bounds are those of the
   * service's highest plan, and an amount within them may still be refused (a refusal the service counts).
   */
  limitUnknown?: boolean;
  /** `CARD_LIMIT_EXCEEDED` for an amount above `maxAmount`. */
  refusal?: QuotedRefusal;
}

/** What a card creation would cost, before confirming it: ours, or the bot's from the plan's fee (no initial balance then). */
export type CreationQuote = Omit<ours.CreationQuote, 'initialBalance'>;

/** What a withdrawal from a card may take now (ours; a remote service's from the card and the bot's own count). */
export type WithdrawalQuote = Omit<ours.WithdrawalQuote, 'cardId'>;

/** A schema of an amount typed in dollars, giving cents. */
export type AmountSchema = ZodType<{ amount: Cents }, { amount: number }>;

/** What the bot checks before asking the service: the spec's input rules and limits. */
export interface InputRules {
  schemas: {
    topup: AmountSchema;
    withdraw: AmountSchema;
    /** The whole creation input, and its `name` alone (checked as it is typed). */
    createCard: ZodType<CreateCardInput> & { shape: { name: ZodType<string> } };
  };
  topupMin: Cents;
  topupMax: Cents;
  withdrawMin: Cents;
  withdrawMax: Cents;
  withdrawCooldownSeconds: number;
}

/** A chat's stored link, as far as the service needs it: the hash of its token. */
export interface LinkedToken {
  tokenHash: string;
  /** The chat the link is in (a remote service's token is kept sealed for it). */
  chatId?: number;
}

/**
 * One user's view of the service (a chat's link, resolved for one update). Every refusal is thrown as
 * the service's coded error (`isCardServiceError`).
 */
export interface CardAccount {
  readonly userId: string;
  walletBalance(): Promise<Wallet>;
  /** Creation fees held for cards being issued (ours); absent elsewhere, read as none. */
  walletHeld?(): Promise<Cents>;
  listBins(): Promise<Bin[]>;
  listPlans(): Promise<Plan[]>;
  /** The user's cards; undefined when the service cannot list them (an extension of the interface). */
  listCards(): Promise<Card[] | undefined>;
  getCard(cardId: string): Promise<Card>;
  getSensitiveDetails(cardId: string): Promise<SensitiveCardDetails>;
  /** What a creation would cost; undefined when the service gives no quote. */
  quoteCreateCard(input: CreateCardInput): Promise<CreationQuote | undefined>;
  createCard(input: CreateCardInput): Promise<Card>;
  /**
   * A top-up's fee before it is made; without a quote at the service (an extension), the bounds the bot
   * knows (`TopupBounds`), or undefined.
   */
  quoteTopup(cardId: string, input: { amount: Cents }): Promise<TopupQuote | TopupBounds | undefined>;
  topup(cardId: string, input: { amount: Cents }): Promise<TopupResult>;
  /** What may be withdrawn now, and with an amount the refusal its withdrawal would meet; undefined when the service gives no quote. */
  quoteWithdrawal(cardId: string, input?: { amount: Cents }): Promise<WithdrawalQuote | undefined>;
  withdraw(cardId: string, input: { amount: Cents }): Promise<WithdrawResult>;
  freeze(cardId: string): Promise<StatusChange>;
  unfreeze(cardId: string): Promise<StatusChange>;
  close(cardId: string): Promise<CloseResult>;
  listTransactions(query: TransactionsQuery): Promise<Page<CardTransaction>>;
  listOtps(cardId: string): Promise<OtpList>;
  /**
   * A card's spending controls and auto top-up (ours, an extension of the interface): present in embedded mode,
   * absent in remote mode, where the service has no such endpoints. The bot offers "Limits" and "Auto top-up"
   * only where all three are present. Amounts in cents; a control left out of `setControls` stays, null is none.
   */
  getControls?(cardId: string): Promise<CardControlsView>;
  setControls?(cardId: string, input: ControlsInput): Promise<CardControlsView>;
  setAutoTopup?(cardId: string, input: AutoTopupInput): Promise<AutoTopup>;
  /**
   * Asks for an OTP by e-mail; absent when the service is known not to offer it, and undefined when the
   * service turns out not to (a remote service that lacks the route: the button goes from then on).
   */
  requestOtp?(cardId: string): Promise<RequestedOtp | undefined>;
  /** Approves or declines a purchase asked in chat (3-D Secure out of band), once. Ours only: its outbox pushes them. */
  answerChallenge?(challengeId: string, answer: ChallengeAnswer): Promise<AnsweredChallenge>;
}

/**
 * The card service as the bot sees it. What only our embedded core has (the event outbox the pushes
 * read, deposit requests and payments) is optional: a remote service leaves it undefined.
 *
 * @example
 * const account = await cards.account(link); // throws INVALID_TOKEN once the token is revoked
 * const wallet = await account.walletBalance();
 */
export interface CardServicePort {
  readonly mode: 'embedded' | 'remote';
  readonly rules: InputRules;
  /** The account a token stands for (linking: its user id); refuses `INVALID_TOKEN`. */
  checkToken(token: string): Promise<CardAccount>;
  /**
   * What a chat's link keeps of the token besides its hash: the token sealed for that chat, when the bot
   * must present it to act (a remote service); undefined when the hash is enough (ours).
   */
  sealToken?(token: string, chatId: number): string;
  /** The account behind a chat's link; throws `INVALID_TOKEN` once its token no longer works. */
  account(link: LinkedToken): Promise<CardAccount>;
  /** Whether the link's token still works, without counting as a use of it (a push to its chat). */
  tokenIsActive(link: LinkedToken): Promise<boolean>;
  /** The stored events pushed to chats (new OTPs, card transactions, deposit decisions). Ours only. */
  readonly events?: EventOutbox;
  /** Deposit requests, Telegram Payments and statistics. Ours only. */
  readonly funding?: Funding;
  /**
   * Watches a card closely for a few minutes ("waiting for a code"), so its next OTP reaches the chat within
   * about a second. Remote mode only: ours pushes every OTP the moment it arrives.
   */
  watchCard?(account: CardAccount, cardId: string): Promise<void>;
  /** Told once a chat is linked (remote mode: the watcher takes the new user at once, before anything new happens). */
  linked?(account: CardAccount): Promise<void>;
}
