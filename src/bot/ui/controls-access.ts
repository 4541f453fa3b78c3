import type { CardControlsView } from '../card-service/from-core.js';
import type { Card, CardAccount, Cents } from '../card-service/port.js';

/** A card's spending controls as the card service reads them, with what the card has spent (UTC day and month). */
export type ControlsView = CardControlsView;

/** An auto top-up's settings as the screens show and set them. */
export interface AutoTopupSettings {
  enabled: boolean;
  minBalance: Cents;
  topupAmount: Cents;
}

/** An account whose service has spending controls and auto top-up (ours). */
export type ControlsAccount = Required<Pick<CardAccount, 'getControls' | 'setControls' | 'setAutoTopup'>>;

/** The account's controls, or undefined where the service has none (remote mode). */
export function controlsOf(account: CardAccount): ControlsAccount | undefined {
  const { getControls, setControls, setAutoTopup } = account;
  if (!getControls || !setControls || !setAutoTopup) return undefined;
  return {
    getControls: getControls.bind(account),
    setControls: setControls.bind(account),
    setAutoTopup: setAutoTopup.bind(account),
  };
}

/** A card's auto top-up as its record carries it (ours); off with no amounts where it says nothing. */
export function autoTopupOf(card: Card): AutoTopupSettings {
  return card.autoTopup ?? { enabled: false, minBalance: 0, topupAmount: 0 };
}
