import { randomUUID } from 'node:crypto';
import type { Db } from '../../../db/schema.js';
import type { Clock } from '../../../infra/clock.js';
import { recordEvent } from '../../operations/events.js';

/** Lithic's tokenization code (`tokenization.two_factor_authentication_code` and its older digital-wallet twin). */
export interface LithicWalletCode {
  card_token: string;
  authentication_code: string;
  tokenization_token?: string;
}

/** What the chat shows as the code's merchant: the wallet is adding the card, no purchase. */
export const WALLET_CODE_MERCHANT = 'Digital wallet';

/**
 * The code a digital wallet asks for to add the card (Lithic sends it to us to deliver ourselves): recorded as the
 * card's OTP and pushed to its holder's chats like every OTP, in one transaction.
 */
export async function pushWalletCode({ db, clock }: { db: Db; clock: Clock }, code: LithicWalletCode): Promise<string | null> {
  const card = await db
    .selectFrom('cards')
    .select(['id', 'user_id', 'name', 'masked_pan', 'currency'])
    .where('provider_card_id', '=', code.card_token)
    .executeTakeFirst();
  if (!card) return 'unknown card';
  const otpId = randomUUID();
  const at = clock.now().toISOString();
  const otp = { code: code.authentication_code, amount: 0, currency: card.currency, merchantName: WALLET_CODE_MERCHANT };
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('card_otps')
      .values({
        id: otpId,
        card_id: card.id,
        code: otp.code,
        amount: 0,
        currency: card.currency,
        merchant_name: WALLET_CODE_MERCHANT,
        source: 'push',
        created_at: at,
      })
      .execute();
    await recordEvent(
      trx,
      card.user_id,
      { kind: 'otp', otpId, cardId: card.id, cardName: card.name, maskedPan: card.masked_pan, ...otp, createdAt: at },
      at,
    );
  });
  return null;
}
