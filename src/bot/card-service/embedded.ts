import type { Clock } from '../../infra/clock.js';
import { inputRulesOf } from './rules.js';
import { createFunding, type Funding } from '../../core/funding/funding.js';
import type { CardService } from '../../core/service.js';
import type { Caller } from '../../core/operations/views.js';
import type { Db } from '../../db/schema.js';
import type { AutoTopupInput, ControlsInput } from './from-core.js';
import type { CardAccount, CardServicePort, Cents, ChallengeAnswer, CreateCardInput, LinkedToken, TransactionsQuery } from './port.js';

/**
 * One user's calls into the core: what the core returns, as it is (no copies on the update path); that it
 * fits the port is checked by `implements CardAccount`.
 */
class EmbeddedAccount implements CardAccount {
  constructor(
    private readonly core: CardService,
    private readonly caller: Caller,
  ) {}

  get userId(): string {
    return this.caller.userId;
  }
  walletBalance() {
    return this.core.walletBalance(this.caller);
  }
  walletHeld() {
    return this.core.walletHeld(this.caller);
  }
  listBins() {
    return this.core.listBins();
  }
  listPlans() {
    return this.core.listPlans();
  }
  listCards() {
    return this.core.listCards(this.caller);
  }
  getCard(cardId: string) {
    return this.core.getCard(this.caller, cardId);
  }
  getSensitiveDetails(cardId: string) {
    return this.core.getSensitiveDetails(this.caller, cardId);
  }
  quoteCreateCard(input: CreateCardInput) {
    return this.core.quoteCreateCard(this.caller, input);
  }
  createCard(input: CreateCardInput) {
    return this.core.createCard(this.caller, input);
  }
  quoteTopup(cardId: string, input: { amount: Cents }) {
    return this.core.quoteTopup(this.caller, cardId, input);
  }
  topup(cardId: string, input: { amount: Cents }) {
    return this.core.topup(this.caller, cardId, input);
  }
  quoteWithdrawal(cardId: string, input?: { amount: Cents }) {
    return this.core.quoteWithdrawal(this.caller, cardId, input);
  }
  withdraw(cardId: string, input: { amount: Cents }) {
    return this.core.withdraw(this.caller, cardId, input);
  }
  freeze(cardId: string) {
    return this.core.freeze(this.caller, cardId);
  }
  unfreeze(cardId: string) {
    return this.core.unfreeze(this.caller, cardId);
  }
  close(cardId: string) {
    return this.core.close(this.caller, cardId);
  }
  listTransactions(query: TransactionsQuery) {
    return this.core.listTransactions(this.caller, query);
  }
  listOtps(cardId: string) {
    return this.core.listOtps(this.caller, cardId);
  }
  getControls(cardId: string) {
    return this.core.getControls(this.caller, cardId);
  }
  setControls(cardId: string, input: ControlsInput) {
    return this.core.setControls(this.caller, cardId, input);
  }
  setAutoTopup(cardId: string, input: AutoTopupInput) {
    return this.core.setAutoTopup(this.caller, cardId, input);
  }
  requestOtp(cardId: string) {
    return this.core.requestOtp(this.caller, cardId);
  }
  answerChallenge(challengeId: string, answer: ChallengeAnswer) {
    return this.core.answerChallenge(this.caller, challengeId, answer);
  }
}

export interface EmbeddedCardServiceDeps {
  core: CardService;
  db: Db;
  clock: Clock;
  /** Deposit requests, payments and statistics (the composition root's); built over `db` when not given. */
  funding?: Funding;
}

/**
 * The card service in this process: the core, called directly, with everything only ours has (the event
 * outbox, funding).
 *
 * @example
 * const cards = embeddedCardService({ core, db, clock });
 * const account = await cards.account(link);
 */
export function embeddedCardService({ core, db, clock, funding }: EmbeddedCardServiceDeps): CardServicePort {
  const { settings } = core;
  const rules = inputRulesOf(settings, core.schemas);
  return {
    mode: 'embedded',
    rules,
    async checkToken(token: string) {
      return new EmbeddedAccount(core, await core.authenticate(token));
    },
    async account(link: LinkedToken) {
      return new EmbeddedAccount(core, await core.authenticateByTokenHash(link.tokenHash));
    },
    tokenIsActive: (link: LinkedToken) => core.tokenIsActive(link.tokenHash),
    events: core.events,
    funding: funding ?? createFunding({ db, clock, settings }),
  };
}
