import type { Db } from '../db/schema.js';
import type { Authentication } from './operations/authentication.js';
import type { ChatLinkPort } from './operations/chat-links.js';
import type { CardDataCipher } from './keys/secrets.js';
import type { MoneyStore } from './money-store/port.js';
import type { SystemAccountIds } from './ledger/ledger.js';
import type { PendingOperations } from './operations/pending-operations.js';
import type { Cooldowns } from './rules/cooldowns.js';
import type { Clock } from '../infra/clock.js';
import type { CommittedEvents } from './operations/events.js';
import type { OtpMailbox } from './provider/mailbox.js';
import type { CardProvider } from './provider/provider.js';
import type { CoreSettings } from './settings.js';

/** Everything the core needs from outside, handed to it by the composition root. */
export interface CoreDeps {
  db: Db;
  clock: Clock;
  provider: CardProvider;
  mailbox: OtpMailbox;
  cipher: CardDataCipher;
  settings: CoreSettings;
  /** The chats linked to tokens (the bot's), ended when their token is revoked. */
  chatLinks: ChatLinkPort;
  /** Told when events were committed (`db` announces them: see `announcingCommits`), for the outbox's consumers to subscribe to. */
  committedEvents?: CommittedEvents;
}

/** `CoreDeps` and what the core builds once from them for all its operations (`createCardService`). */
export interface OperationDeps extends CoreDeps {
  /** The system accounts' ids, each looked up once for the whole core. */
  systemAccounts: SystemAccountIds;
  /** The withdrawals and closures waiting on the provider, bound to `db`, `clock` and `systemAccounts`. */
  pending: PendingOperations;
  /** The per-card cooldowns of `settings`. */
  cooldowns: Cooldowns;
  /** Callers by their token's hash (`TokenHolder`s resolved). */
  authentication: Authentication;
  /** Where money moves: the store for `db`'s dialect, chosen once (`money-store/port.ts`). */
  money: MoneyStore;
}
