import type { Db } from '../../../db/schema.js';
import type { Clock } from '../../../infra/clock.js';
import { recordPushedOtp } from '../../operations/pushed-otps.js';

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
  await recordPushedOtp(
    db,
    card,
    { code: code.authentication_code, amount: 0, merchantName: WALLET_CODE_MERCHANT },
    clock.now().toISOString(),
  );
  return null;
}
