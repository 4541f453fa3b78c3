import type { CoreDeps } from './deps.js';

export interface PurgeReport {
  /** OTP codes older than the retention, from the card's OTP list. */
  otps: number;
  /** Outbox rows: every delivered one, and undelivered ones older than the retention (news nobody took). */
  outbox: number;
  /** Sandbox OTP e-mails older than the retention. */
  mailbox: number;
}

/**
 * OTP codes live only as long as their use: a code older than `settings.otpRetentionSeconds` is deleted
 * wherever the core keeps one, and so is the outbox's delivered history. The outbox stays bounded
 * when no bot consumes it: what waited longer than the retention is dropped (a day-old OTP or alert
 * is of no use; the card's transaction list keeps the transactions, the deposit requests their decisions).
 */
export function createRetention({ db, clock, settings }: Pick<CoreDeps, 'db' | 'clock' | 'settings'>) {
  return {
    cutoff(): Date {
      return new Date(clock.now().getTime() - settings.otpRetentionSeconds * 1000);
    },

    async purge(): Promise<PurgeReport> {
      const cutoff = this.cutoff().toISOString();
      const otps = await db.deleteFrom('card_otps').where('created_at', '<', cutoff).executeTakeFirst();
      const outbox = await db
        .deleteFrom('outbox')
        .where((eb) => eb.or([eb('delivered_at', 'is not', null), eb('created_at', '<', cutoff)]))
        .executeTakeFirst();
      const mailbox = await db.deleteFrom('sandbox_mailbox').where('received_at', '<', cutoff).executeTakeFirst();
      return { otps: Number(otps.numDeletedRows), outbox: Number(outbox.numDeletedRows), mailbox: Number(mailbox.numDeletedRows) };
    },
  };
}

export type Retention = ReturnType<typeof createRetention>;
