import type { CategoryGroup } from '../card-service/from-core.js';
import type { Card, CardAccount, Cents } from '../card-service/port.js';

/** A card's spending controls as the card service reads them, with what the card has spent (UTC day and month). */
export interface ControlsView {
  perPurchaseLimit: Cents | null;
  dailyLimit: Cents | null;
  monthlyLimit: Cents | null;
  blockedCategories: CategoryGroup[];
  spentToday: Cents;
  spentThisMonth: Cents;
}

export interface ControlsInput {
  perPurchaseLimit?: Cents | null;
  dailyLimit?: Cents | null;
  monthlyLimit?: Cents | null;
  blockedCategories?: CategoryGroup[];
}

export interface AutoTopupSettings {
  enabled: boolean;
  minBalance: Cents;
  topupAmount: Cents;
}

/** What an account offers for the card's controls and auto top-up (ours); a remote service has none. */
export interface ControlsAccount {
  getControls(cardId: string): Promise<ControlsView>;
  setControls(cardId: string, input: ControlsInput): Promise<unknown>;
  setAutoTopup(cardId: string, input: AutoTopupSettings): Promise<unknown>;
}

/** The account's controls, or undefined where the service has none (remote mode). */
export function controlsOf(account: CardAccount): ControlsAccount | undefined {
  const candidate = account as Partial<ControlsAccount>;
  if (!candidate.getControls || !candidate.setControls || !candidate.setAutoTopup) return undefined;
  return candidate as ControlsAccount;
}

/** A card's auto top-up as its record carries it (ours); off with no amounts where it says nothing. */
export function autoTopupOf(card: Card): AutoTopupSettings {
  const carried = (card as { autoTopup?: AutoTopupSettings }).autoTopup;
  return carried ?? { enabled: false, minBalance: 0, topupAmount: 0 };
}
