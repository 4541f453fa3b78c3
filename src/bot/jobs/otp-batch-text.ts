import type { CoreEvent } from '../card-service/from-core.js';
import { localMoney, merchantText, type T } from '../ui/format.js';

type OtpEvent = Extract<CoreEvent, { kind: 'otp' }>;

/** Codes one merged message shows at most (the newest); the older ones of the batch are counted. */
export const CODES_SHOWN = 20;

/**
 * Several OTPs of one chat pending at once, as one message: the newest `CODES_SHOWN` codes (newest last),
 * how many older ones it merged without showing them, and when it is deleted. A flood of codes on a card
 * (a broken or hostile card service) reaches the chat as a few such messages, never one per code.
 */
export function otpBatchText(t: T, otps: readonly OtpEvent[], ttlSeconds: number): string {
  const shown = otps.slice(-CODES_SHOWN);
  const earlier = otps.length - shown.length;
  const lines = shown.map((otp) =>
    t('otp-push-many-line', {
      code: otp.code,
      name: otp.cardName,
      masked: otp.maskedPan,
      payment: otp.merchantName?.trim() ? 'merchant' : otp.amount > 0 ? 'amount' : 'none',
      amount: localMoney(otp.amount, otp.currency),
      merchant: merchantText(t, otp.merchantName ?? ''),
    }),
  );
  return [
    t('otp-push-many-title', { count: otps.length }),
    ...lines,
    ...(earlier > 0 ? [t('otp-push-many-earlier', { count: earlier })] : []),
    t('otp-push-many-ttl', { ttl: ttlSeconds }),
  ].join('\n');
}
