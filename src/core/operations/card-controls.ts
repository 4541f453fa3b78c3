import type { Db } from '../../db/schema.js';
import type { Clock } from '../../infra/clock.js';
import { autoTopupOf, controlsOf, spendingOf, type AutoTopup, type CardControls, type Spending } from '../authorization/controls.js';
import { formatAmount, toAmount, type Cents } from '../ledger/money.js';
import type { AutoTopupInput, ControlsInput } from '../rules/control-schemas.js';
import { CardServiceError } from '../rules/errors.js';
import { inputGuards, parseInput, type InputSchemas } from '../rules/schemas.js';
import type { CoreSettings } from '../settings.js';
import { findOwnedCard } from './card-queries.js';
import type { Caller, CardWithBalance } from './views.js';

export type { AutoTopupInput, ControlsInput } from '../rules/control-schemas.js';

/** A card's spending controls and what they bound: spent today and this month (UTC). */
export interface CardControlsView extends CardControls {
  spentToday: Cents;
  spentThisMonth: Cents;
}

/** What the controls' operations need; `schemas` are the settings' (`inputGuards`). */
export interface ControlDeps {
  db: Db;
  clock: Clock;
  settings: CoreSettings;
  schemas: InputSchemas;
}

/**
 * The cardholder's spending controls and auto top-up (issue 33, sections 2 and 3): read and set on the
 * caller's card; another user's card reads exactly like a missing one (`findOwnedCard`), a closed card
 * refuses a change. Amounts in cents; the core re-checks what it is given with the wire's schemas, so a
 * caller that skips them (the bot, a script) meets the same refusals.
 *
 * @example
 * const controls = createControlOperations(deps);
 * await controls.setControls(caller, cardId, { dailyLimit: 50_00, blockedCategories: ['gambling'] });
 */
export function createControlOperations({ db, clock, settings }: Omit<ControlDeps, 'schemas'>) {
  const deps: ControlDeps = { db, clock, settings, schemas: inputGuards(settings).schemas };
  return {
    getControls: (caller: Caller, cardId: string) => getControls(deps, caller, cardId),
    setControls: (caller: Caller, cardId: string, input: ControlsInput) => setControls(deps, caller, cardId, input),
    setAutoTopup: (caller: Caller, cardId: string, input: AutoTopupInput) => setAutoTopup(deps, caller, cardId, input),
  };
}

export async function getControls({ db, clock }: ControlDeps, caller: Caller, cardId: string): Promise<CardControlsView> {
  const card = await findOwnedCard(db, caller, cardId);
  return controlsView(controlsOf(card), await spendingOf(db, card.id, clock.now()));
}

/** Sets the controls given (null is none), leaving the others as they are. */
export async function setControls(
  { db, clock, schemas }: ControlDeps,
  caller: Caller,
  cardId: string,
  input: ControlsInput,
): Promise<CardControlsView> {
  const checked = parseInput(schemas.controls, {
    per_purchase_limit: asAmount(input.perPurchaseLimit),
    daily_limit: asAmount(input.dailyLimit),
    monthly_limit: asAmount(input.monthlyLimit),
    blocked_categories: input.blockedCategories,
  });
  const blocked = checked.blockedCategories === undefined ? undefined : [...new Set(checked.blockedCategories)];
  const row = await db
    .updateTable('cards')
    .set({
      ...(checked.perPurchaseLimit !== undefined && { per_purchase_limit: checked.perPurchaseLimit }),
      ...(checked.dailyLimit !== undefined && { daily_limit: checked.dailyLimit }),
      ...(checked.monthlyLimit !== undefined && { monthly_limit: checked.monthlyLimit }),
      ...(blocked !== undefined && { blocked_categories: JSON.stringify(blocked) }),
      updated_at: clock.now().toISOString(),
    })
    .where('id', '=', cardId)
    .where('user_id', '=', caller.userId)
    .where('status', '<>', 'closed')
    .returning(['per_purchase_limit', 'daily_limit', 'monthly_limit', 'blocked_categories'])
    .executeTakeFirst();
  if (!row) throw await refusalOf(db, caller, cardId);
  return controlsView(controlsOf(row), await spendingOf(db, cardId, clock.now()));
}

/**
 * Turns the card's auto top-up on or off with its amounts: the top-up amount within a top-up's bounds and the
 * card's plan limit; the minimum balance not negative and at most the plan limit. Turning it on needs a
 * top-up amount, given now or before.
 */
export async function setAutoTopup(
  { db, clock, settings, schemas }: ControlDeps,
  caller: Caller,
  cardId: string,
  input: AutoTopupInput,
): Promise<AutoTopup> {
  const checked = parseInput(schemas.autoTopup, {
    enabled: input.enabled,
    min_balance: asAmount(input.minBalance),
    topup_amount: asAmount(input.topupAmount),
  });
  const card = await findOwnedCard(db, caller, cardId);
  if (card.status === 'closed') throw new CardServiceError('CARD_CLOSED');
  const stored = autoTopupOf(card);
  const minBalance = checked.minBalance ?? stored.minBalance;
  const topupAmount = checked.topupAmount ?? stored.topupAmount;
  if (checked.enabled && topupAmount < settings.topupMin) {
    throw refused('topup_amount', 'Top-up amount is required to turn auto top-up on');
  }
  const planLimit = Number(card.limit_amount);
  if (topupAmount > planLimit) throw overPlanLimit('topup_amount', 'Top-up amount', planLimit);
  if (minBalance > planLimit) throw overPlanLimit('min_balance', 'Minimum balance', planLimit);
  const row = await db
    .updateTable('cards')
    .set({
      auto_topup_enabled: checked.enabled ? 1 : 0,
      auto_topup_min_balance: minBalance,
      auto_topup_amount: topupAmount,
      updated_at: clock.now().toISOString(),
    })
    .where('id', '=', card.id)
    .where('user_id', '=', caller.userId)
    .where('status', '<>', 'closed')
    .returning(['auto_topup_enabled', 'auto_topup_min_balance', 'auto_topup_amount', 'auto_topup_last_triggered'])
    .executeTakeFirst();
  if (!row) throw await refusalOf(db, caller, cardId);
  return autoTopupOf(row);
}

const controlsView = (controls: CardControls, spent: Spending): CardControlsView => ({
  ...controls,
  spentToday: spent.today,
  spentThisMonth: spent.thisMonth,
});

/** Cents as the wire's amount, for the schemas to re-check (a fraction of a cent is refused as a third decimal). */
const asAmount = <T extends Cents | null | undefined>(cents: T) => (typeof cents === 'number' ? toAmount(cents) : cents);

/** Why a change found no card to change: not the caller's (or gone), else closed. */
async function refusalOf(db: Db, caller: Caller, cardId: string): Promise<CardServiceError> {
  const card: CardWithBalance = await findOwnedCard(db, caller, cardId);
  return new CardServiceError(card.status === 'closed' ? 'CARD_CLOSED' : 'CARD_NOT_FOUND');
}

function refused(field: string, message: string): CardServiceError<'VALIDATION'> {
  return new CardServiceError('VALIDATION', { issues: [{ code: 'invalid_value', message, path: [field] }] });
}

function overPlanLimit(field: string, name: string, limit: Cents): CardServiceError<'VALIDATION'> {
  return new CardServiceError('VALIDATION', {
    issues: [
      {
        code: 'too_big',
        maximum: toAmount(limit),
        type: 'number',
        inclusive: true,
        exact: false,
        message: `${name} must be at most ${formatAmount(limit)}, the card's plan limit`,
        path: [field],
      },
    ],
  });
}
