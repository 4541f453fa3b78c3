import { InlineKeyboard } from 'grammy';
import type { Challenge, ChallengeAnswer } from '../card-service/port.js';
import { localMoney, merchantText, type T } from './format.js';

/**
 * A purchase to approve in chat (3-D Secure out of band): its question, its two buttons, and the same
 * message once answered or expired, the outcome under the question and the buttons gone.
 */

/** Callback data of the answer buttons: `3ds:a:<challenge id>` or `3ds:d:<id>` (42 bytes with a UUID, under Telegram's 64). */
export const CHALLENGE_BUTTON = /^3ds:([ad]):([\w-]{1,40})$/;

export function challengeButton(answer: ChallengeAnswer, challengeId: string): string {
  return `3ds:${answer === 'approve' ? 'a' : 'd'}:${challengeId}`;
}

export function parseChallengeButton(raw: string): { answer: ChallengeAnswer; challengeId: string } | undefined {
  const match = CHALLENGE_BUTTON.exec(raw);
  return match ? { answer: match[1] === 'a' ? 'approve' : 'decline', challengeId: match[2]! } : undefined;
}

/** The challenge as the push names it (the event's fields, or the core's challenge read back). */
type Asked = Pick<Challenge, 'amount' | 'currency' | 'merchantName' | 'cardName' | 'maskedPan' | 'createdAt' | 'expiresAt'>;

/** "Approve $42.10 at STEAM?", the card, and how long it may be answered (whole minutes, at least one). */
export function challengeQuestion(t: T, asked: Asked): string {
  const minutes = Math.max(1, Math.ceil((Date.parse(asked.expiresAt) - Date.parse(asked.createdAt)) / 60_000));
  return t('challenge-push', {
    amount: localMoney(asked.amount, asked.currency),
    merchant: merchantText(t, asked.merchantName),
    name: asked.cardName,
    masked: asked.maskedPan,
    minutes,
  });
}

export function challengeKeyboard(t: T, challengeId: string): InlineKeyboard {
  return new InlineKeyboard()
    .text(t('btn-challenge-approve'), challengeButton('approve', challengeId))
    .text(t('btn-challenge-decline'), challengeButton('decline', challengeId));
}

/** The message once decided: the question, then "✅ Approved", "❌ Declined" or expired. */
export function challengeOutcome(t: T, challenge: Asked & Pick<Challenge, 'status'>): string {
  const outcome = challenge.status === 'pending' ? '' : `\n\n${t('challenge-outcome', { status: challenge.status })}`;
  return `${challengeQuestion(t, challenge)}${outcome}`;
}
