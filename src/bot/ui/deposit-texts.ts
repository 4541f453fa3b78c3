import type { I18n } from '@grammyjs/i18n';
import { InlineKeyboard } from 'grammy';
import type { DepositError, DepositErrorCode, DepositRequest } from '../card-service/from-core.js';
import type { Cents } from '../card-service/port.js';
import type { BotContext } from '../context.js';
import { localDateTime, localMoney, type T } from './format.js';
import { withMenuButton } from './keyboards.js';

/** Texts and buttons of deposit requests, for the cardholder's chat and the admins' chat. */

/** Every deposit refusal as chat text (`locales/*.ftl`); the compiler checks that each code has one. */
const DEPOSIT_REFUSALS: { readonly [C in DepositErrorCode]: string } = {
  REQUEST_NOT_FOUND: 'deposit-refusal-not-found',
  ALREADY_DECIDED: 'deposit-refusal-already-decided',
  NOTE_TOO_LONG: 'deposit-refusal-note-too-long',
  REASON_REQUIRED: 'deposit-refusal-reason-required',
  REASON_TOO_LONG: 'deposit-refusal-reason-too-long',
  TOO_MANY_PENDING: 'deposit-refusal-too-many-pending',
  USER_NOT_FOUND: 'deposit-refusal-user-not-found',
};

export function depositRefusalText(t: T, error: DepositError): string {
  // A request's number reads as written (#1234), not as a quantity (#1,234).
  const { id, ...rest } = error.params as { id?: number };
  return t(DEPOSIT_REFUSALS[error.code], id === undefined ? rest : { ...rest, id: String(id) });
}

/** A translator for a fixed language, for messages no update of that chat's user asked for. */
export function translatorIn(i18n: I18n<BotContext>, locale: string): T {
  return (key, variables) => i18n.t(locale, key, variables);
}

/** Reasons an admin can pick with one press; the English text is what is stored, the cardholder reads their own. */
export const PRESET_REASONS = ['nr', 'am', 'du'] as const;
export type PresetReason = (typeof PRESET_REASONS)[number];
export const presetReasonKey = (preset: PresetReason) => `deposit-reason-${preset}`;

/** The stored reason in the cardholder's language when it is one of the presets; as typed otherwise. */
export function reasonFor(t: T, english: T, reason: string): string {
  const preset = PRESET_REASONS.find((p) => english(presetReasonKey(p)) === reason);
  return preset ? t(presetReasonKey(preset)) : reason;
}

/** The cardholder's side: `dp:a:<cents>` picks an amount, `dp:<r|p|x>:<nonce>` asks admins, pays, or cancels. */
export type DepositChoice = 'request' | 'pay' | 'cancel';
const CHOICE_CODES: Record<DepositChoice, string> = { request: 'r', pay: 'p', cancel: 'x' };
export type DepositCallback = { kind: 'amount'; amount: Cents } | { kind: 'choice'; choice: DepositChoice; nonce: string };

export function decodeDepositCallback(data: string): DepositCallback | undefined {
  const amount = /^dp:a:(\d{1,9})$/.exec(data);
  if (amount) return { kind: 'amount', amount: Number(amount[1]) };
  const choice = /^dp:([rpx]):([\w-]{1,40})$/.exec(data);
  if (!choice) return undefined;
  const name = (Object.keys(CHOICE_CODES) as DepositChoice[]).find((c) => CHOICE_CODES[c] === choice[1])!;
  return { kind: 'choice', choice: name, nonce: choice[2]! };
}

/** Data of an "Add money" button under a pushed message (an auto top-up the wallet could not cover): the screen. */
export const ADD_MONEY_BUTTON = 'dp:m';

/** Amounts offered with one press on the "Add money" screen, in cents. */
const PRESET_AMOUNTS: Cents[] = [2_500, 5_000, 10_000, 25_000, 50_000, 100_000];

/** The "Add money" amounts, three a row, and the way back to the main menu (the screen is drawn in its message). */
export function presetAmountsKeyboard(t: T, within: (amount: Cents) => boolean): InlineKeyboard {
  const kb = new InlineKeyboard();
  PRESET_AMOUNTS.filter(within).forEach((amount, i) => {
    kb.text(`$${(amount / 100).toLocaleString('en-US')}`, `dp:a:${amount}`);
    if (i % 3 === 2) kb.row();
  });
  return withMenuButton(t, kb);
}

/** The offer's choices: a request (for the admins' chat, or only recorded for the operator), an invoice when `canPay`, cancel. */
export function depositChoiceKeyboard(t: T, nonce: string, choices: { recordedOnly: boolean; canPay: boolean }): InlineKeyboard {
  const { recordedOnly, canPay } = choices;
  const request = t(recordedOnly ? 'btn-deposit-record' : 'btn-deposit-request');
  const kb = new InlineKeyboard().text(request, `dp:${CHOICE_CODES.request}:${nonce}`).row();
  if (canPay) kb.text(t('btn-deposit-pay'), `dp:${CHOICE_CODES.pay}:${nonce}`).row();
  return kb.text(t('btn-cancel'), `dp:${CHOICE_CODES.cancel}:${nonce}`);
}

/** The admins' side: `dr:a:<id>` approve, `dr:r:<id>` reasons, `dr:x:<id>:<preset>`, `dr:o:<id>` typed reason, `dr:b:<id>` back. */
export type DecisionCallback =
  | { action: 'approve' | 'reasons' | 'other' | 'back'; id: number }
  | { action: 'reject'; id: number; preset: PresetReason };
const DECISION_ACTIONS = { a: 'approve', r: 'reasons', o: 'other', b: 'back' } as const;

export function decodeDecisionCallback(data: string): DecisionCallback | undefined {
  const preset = /^dr:x:(\d{1,12}):(\w+)$/.exec(data);
  if (preset) {
    const reason = PRESET_REASONS.find((p) => p === preset[2]);
    return reason ? { action: 'reject', id: Number(preset[1]), preset: reason } : undefined;
  }
  const match = /^dr:([arob]):(\d{1,12})$/.exec(data);
  return match ? { action: DECISION_ACTIONS[match[1] as keyof typeof DECISION_ACTIONS], id: Number(match[2]) } : undefined;
}

export function decisionKeyboard(t: T, id: number): InlineKeyboard {
  return new InlineKeyboard().text(t('btn-deposit-approve'), `dr:a:${id}`).text(t('btn-deposit-reject'), `dr:r:${id}`);
}

export function reasonsKeyboard(t: T, id: number): InlineKeyboard {
  const kb = new InlineKeyboard();
  for (const preset of PRESET_REASONS) kb.text(t(presetReasonKey(preset)), `dr:x:${id}:${preset}`).row();
  return kb.text(t('btn-deposit-other-reason'), `dr:o:${id}`).row().text(t('btn-back'), `dr:b:${id}`);
}

/** A request as the admins' chat shows it, with its decision once there is one. */
export function requestCard(t: T, request: DepositRequest, decidedBy?: string): string {
  const card = t('deposit-card', {
    id: String(request.id),
    name: request.userName,
    userId: request.userId,
    amount: localMoney(request.amount),
    note: request.note ?? '—',
    at: localDateTime(request.createdAt),
  });
  const admin = decidedBy ?? request.decidedBy ?? '';
  if (request.status === 'approved') return `${card}\n\n${t('deposit-card-approved', { admin, amount: localMoney(request.amount) })}`;
  if (request.status === 'rejected') return `${card}\n\n${t('deposit-card-rejected', { admin, reason: request.reason ?? '' })}`;
  return card;
}

/** How an admin is named on a decided card: their @username, or their first name. */
export function adminName(from: { first_name: string; username?: string }): string {
  return from.username ? `@${from.username}` : from.first_name;
}
