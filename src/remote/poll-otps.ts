import { recordEvent, type OtpEvent } from '../core/operations/events.js';
import type { DueCard } from './poll-schedule.js';
import { remoteTables } from './tables.js';
import { claimedRequest, type PollDeps } from './poll.js';
import { isStale, markSeen, seenAmong } from './seen.js';
import type { CardOtp } from '../interface/objects.js';

/**
 * The poll of a card's OTP list (4.13): claimed first (no one polled it since it was read), then each new
 * code recorded as an outbox event, oldest first. The first poll of a card takes what is there as history.
 */
export async function pollCard(deps: PollDeps, due: DueCard, token: string): Promise<void> {
  const { client, clock, known } = deps;
  const at = clock.now();
  if (!(await known.claimCard(due, at))) return;
  const { otps, cardInfo } = await claimedRequest(
    () => client.as(token).listOtps(due.cardId),
    () => known.releaseCard(due, at),
  );
  deps.answered();
  await recordOtps(deps, due.userId, due.cardId, otps, cardInfo?.nickname ?? '');
}

async function recordOtps(
  { db, clock }: Pick<PollDeps, 'db' | 'clock'>,
  userId: string,
  cardId: string,
  otps: CardOtp[],
  nickname: string,
): Promise<void> {
  const tables = remoteTables(db);
  const card = await tables
    .selectFrom('bot_remote_cards')
    .select('baselined_at')
    .where('user_id', '=', userId)
    .where('card_id', '=', cardId)
    .executeTakeFirst();
  if (!card) return;
  const seen = await seenAmong(
    db,
    userId,
    'otp',
    otps.map((o) => o.id),
  );
  if (card.baselined_at !== null && otps.every((o) => seen.has(o.id))) return;
  const oldestFirst = otps
    .map((otp, index) => ({ otp, index }))
    .sort((a, b) => a.otp.createdAt.localeCompare(b.otp.createdAt) || a.index - b.index)
    .map((o) => o.otp);
  await db.transaction().execute(async (trx) => {
    const t = remoteTables(trx);
    const at = clock.now().toISOString();
    const baseline = await t
      .updateTable('bot_remote_cards')
      .set({ baselined_at: at })
      .where('user_id', '=', userId)
      .where('card_id', '=', cardId)
      .where('baselined_at', 'is', null)
      .executeTakeFirst();
    const history = Number(baseline.numUpdatedRows) === 1;
    for (const otp of oldestFirst) {
      if (!(await markSeen(trx, userId, 'otp', otp.id, at)) || history || isStale(otp.createdAt, at)) continue;
      const event: OtpEvent = {
        kind: 'otp',
        otpId: otp.id,
        cardId,
        cardName: otp.cardName || nickname,
        maskedPan: otp.maskedPan,
        code: otp.code,
        amount: otp.amount,
        currency: otp.currency,
        merchantName: '',
        createdAt: otp.createdAt || at,
      };
      await recordEvent(trx, userId, event, at);
    }
  });
}
