import type { Clock } from '../../infra/clock.js';
import type { Db, Executor } from '../../db/schema.js';

/**
 * Where OTP e-mails for a card land; `takeLatest` consumes the newest unread one. A mailbox kept in
 * the database takes it inside `within` (the caller's transaction), so a failure after it loses nothing.
 */
export interface OtpMailbox {
  takeLatest(providerCardId: string, within?: Executor): Promise<{ code: string; receivedAt: string } | null>;
}

/** The sandbox mailbox keeps its e-mails in the database, so the admin command line can drop one in. */
export function createSandboxMailbox(
  db: Db,
  clock: Clock,
): OtpMailbox & {
  deliver(providerCardId: string, code: string): Promise<void>;
} {
  return {
    async deliver(providerCardId, code) {
      await db
        .insertInto('sandbox_mailbox')
        .values({ provider_card_id: providerCardId, code, received_at: clock.now().toISOString(), taken_at: null })
        .execute();
    },
    async takeLatest(providerCardId, within) {
      const take = async (trx: Executor) => {
        const mail = await trx
          .selectFrom('sandbox_mailbox')
          .select(['id', 'code', 'received_at'])
          .where('provider_card_id', '=', providerCardId)
          .where('taken_at', 'is', null)
          .orderBy('id', 'desc')
          .limit(1)
          .executeTakeFirst();
        if (!mail) return null;
        await trx.updateTable('sandbox_mailbox').set({ taken_at: clock.now().toISOString() }).where('id', '=', mail.id).execute();
        return { code: mail.code, receivedAt: mail.received_at };
      };
      return within ? take(within) : db.transaction().execute(take);
    },
  };
}
