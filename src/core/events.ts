import type { Db, Executor, OutboxRow } from '../db/schema.js';

export interface OtpEvent {
  kind: 'otp';
  otpId: string;
  cardId: string;
  cardName: string;
  maskedPan: string;
  code: string;
  amount: number;
  currency: string;
  merchantName: string;
  createdAt: string;
}

export interface CardTransactionEvent {
  kind: 'card_transaction';
  transactionId: string;
  cardId: string;
  cardName: string;
  maskedPan: string;
  status: 'Approved' | 'Declined';
  side: 'Debit' | 'Credit';
  type: string;
  amount: number;
  currency: string;
  merchantName: string;
  declineCode: string | null;
  cardBalance: number;
  createdAt: string;
}

/** Amounts are cents. */
export type CoreEvent = OtpEvent | CardTransactionEvent;

export interface PendingEvent {
  seq: number;
  userId: string;
  event: CoreEvent;
}

/** Written in the same transaction as the change it reports, so no event is lost on a crash. */
export async function recordEvent(ex: Executor, userId: string, event: CoreEvent, at: string): Promise<void> {
  await ex
    .insertInto('outbox')
    .values({ user_id: userId, kind: event.kind, payload: JSON.stringify(event), created_at: at, delivered_at: null })
    .execute();
}

/** The outbox as a consumer (the bot) reads it: oldest undelivered first, marked once delivered. */
export function createEventOutbox(db: Db) {
  return {
    async pending(limit = 100): Promise<PendingEvent[]> {
      const rows: OutboxRow[] = await db
        .selectFrom('outbox')
        .selectAll()
        .where('delivered_at', 'is', null)
        .orderBy('seq')
        .limit(limit)
        .execute();
      return rows.map((row) => ({ seq: row.seq, userId: row.user_id, event: JSON.parse(row.payload) as CoreEvent }));
    },
    async markDelivered(seq: number, at: Date): Promise<void> {
      await db.updateTable('outbox').set({ delivered_at: at.toISOString() }).where('seq', '=', seq).execute();
    },
  };
}

export type EventOutbox = ReturnType<typeof createEventOutbox>;
