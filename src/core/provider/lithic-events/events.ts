import type { Db, LithicEventsTable } from '../../../db/schema.js';
import type { Clock } from '../../../infra/clock.js';
import type { AuthorizationOperations } from '../../authorization/engine.js';
import { applyCardTransaction, type LithicCardTransaction } from './transactions.js';
import { type LithicThreeDsChallenge, openThreeDsChallenge } from './three-ds.js';
import { type LithicWalletCode, pushWalletCode } from './wallet-code.js';

/** The event types handled; any other is acknowledged and counted (`lithic_events.status = 'unknown'`). */
export const HANDLED_EVENT_TYPES = [
  'card_transaction.updated',
  'three_ds_authentication.challenge',
  'tokenization.two_factor_authentication_code',
  'digital_wallet.tokenization_two_factor_authentication_code',
] as const;

export interface LithicEventDeps {
  db: Db;
  clock: Clock;
  core: Pick<AuthorizationOperations, 'authorize' | 'clearAuthorization' | 'voidAuthorization'>;
  /** Told of each event of a type not handled (a Prometheus counter). */
  onUnknown?: (eventType: string) => void;
}

export interface ReceivedEvent {
  status: LithicEventsTable['status'];
  /** True when this `webhook-id` was handled before: nothing was done again. */
  duplicate: boolean;
}

/**
 * One delivery of Lithic's events (`POST /provider/lithic/events`, its signature checked by the route): stored once
 * by its `webhook-id`, then handled. A replay of a handled one does nothing; one whose handling failed (still
 * `received`) is handled again, every handler being safe to run twice. Throws only when the handling failed, so
 * that Lithic delivers it again.
 *
 * @example
 * await receiveLithicEvent(deps, headers['webhook-id'], JSON.parse(body)); // { status: 'handled', duplicate: false }
 */
export async function receiveLithicEvent(
  deps: LithicEventDeps,
  webhookId: string,
  payload: { event_type?: unknown },
): Promise<ReceivedEvent> {
  const eventType = typeof payload.event_type === 'string' ? payload.event_type : '';
  const now = deps.clock.now().toISOString();
  await deps.db
    .insertInto('lithic_events')
    .values({ webhook_id: webhookId, event_type: eventType, status: 'received', note: null, received_at: now, handled_at: null })
    .onConflict((oc) => oc.column('webhook_id').doNothing())
    .execute();
  const row = await deps.db.selectFrom('lithic_events').select('status').where('webhook_id', '=', webhookId).executeTakeFirstOrThrow();
  if (row.status !== 'received') return { status: row.status, duplicate: true };

  const notes = await handle(deps, eventType, payload);
  const status = notes === null ? 'unknown' : notes.length > 0 ? 'review' : 'handled';
  if (status === 'unknown') deps.onUnknown?.(eventType);
  await deps.db
    .updateTable('lithic_events')
    .set({ status, note: notes && notes.length > 0 ? notes.join('\n').slice(0, 2_000) : null, handled_at: deps.clock.now().toISOString() })
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'received')
    .execute();
  return { status, duplicate: false };
}

/** The notes for review (empty when all went through), or null for a type not handled. */
async function handle(deps: LithicEventDeps, eventType: string, payload: object): Promise<string[] | null> {
  const one = (note: string | null) => (note === null ? [] : [note]);
  switch (eventType) {
    case 'card_transaction.updated':
      return applyCardTransaction(deps, payload as LithicCardTransaction);
    case 'three_ds_authentication.challenge':
      return one(await openThreeDsChallenge(deps, payload as LithicThreeDsChallenge));
    case 'tokenization.two_factor_authentication_code':
    case 'digital_wallet.tokenization_two_factor_authentication_code':
      return one(await pushWalletCode(deps, payload as LithicWalletCode));
    default:
      return null;
  }
}

/** How many events of each type not handled were received (the operator's count). */
export async function countUnknownEvents(db: Db): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('lithic_events')
    .select(['event_type', (eb) => eb.fn.countAll<number | string | bigint>().as('count')])
    .where('status', '=', 'unknown')
    .groupBy('event_type')
    .execute();
  return Object.fromEntries(rows.map((row) => [row.event_type, Number(row.count)]));
}
