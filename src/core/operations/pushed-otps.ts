import { randomUUID } from 'node:crypto';
import type { CardRow, Db } from '../../db/schema.js';
import { recordEvent } from './events.js';

/** What an OTP push names of its card. */
export type OtpCard = Pick<CardRow, 'id' | 'user_id' | 'name' | 'masked_pan' | 'currency'>;

/**
 * A code the provider sends for the cardholder (3-D Secure, a digital wallet adding the card): recorded as the
 * card's OTP and pushed to its holder's chats, in one transaction. Returns the OTP's id.
 */
export async function recordPushedOtp(
  db: Db,
  card: OtpCard,
  otp: { code: string; amount: number; merchantName: string },
  at: string,
): Promise<string> {
  const otpId = randomUUID();
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('card_otps')
      .values({
        id: otpId,
        card_id: card.id,
        code: otp.code,
        amount: otp.amount,
        currency: card.currency,
        merchant_name: otp.merchantName,
        source: 'push',
        created_at: at,
      })
      .execute();
    const pushed = { cardId: card.id, cardName: card.name, maskedPan: card.masked_pan, currency: card.currency };
    await recordEvent(trx, card.user_id, { kind: 'otp', otpId, ...pushed, ...otp, createdAt: at }, at);
  });
  return otpId;
}
