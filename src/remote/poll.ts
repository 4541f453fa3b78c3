import type { Clock } from '../infra/clock.js';
import type { Db } from '../db/schema.js';
import type { RemoteCardClient } from './client.js';
import { ServiceUnavailableError } from './service-errors.js';
import type { KnownCards } from './known-cards.js';

/** What one poll of the remote watch (a card's OTPs, a user's transactions) needs. */
export interface PollDeps {
  db: Db;
  client: RemoteCardClient;
  clock: Clock;
  known: KnownCards;
  /** Transactions read a page. */
  pageSize: number;
  /** The most pages of transactions one poll reads back to the last one seen. */
  maxPages: number;
  /** The service answered a poll: a pause after failures is over. */
  answered(): void;
}

/** The request of a claimed poll: a service that did not answer gives the claim back, so the poll is not lost till the next interval. */
export async function claimedRequest<T>(request: () => Promise<T>, release: () => Promise<void>): Promise<T> {
  try {
    return await request();
  } catch (error) {
    if (error instanceof ServiceUnavailableError) await release().catch(() => undefined);
    throw error;
  }
}
