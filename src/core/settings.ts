import type { Cents } from './ledger/money.js';
import { PROVIDER_TIMEOUT_DEFAULT_MS } from './provider/provider-timeout.js';

/** The rules' numbers. Defaults are the spec's (section 8); an operator may change them. */
export interface CoreSettings {
  environment: string;
  topupCooldownSeconds: number;
  withdrawCooldownSeconds: number;
  topupMin: Cents;
  topupMax: Cents;
  withdrawMin: Cents;
  withdrawMax: Cents;
  pageSizeDefault: number;
  pageSizeMax: number;
  /** How long an OTP code is kept anywhere (the OTP list, the outbox, stored replies). */
  otpRetentionSeconds: number;
  /** How long a card-provider call may take before it is given up as failed (`withTimeout`). */
  providerTimeoutMs: number;
  /** How long an approved authorization's hold lasts uncleared before the housekeeping releases it (`Reversed`). */
  authorizationHoldDays: number;
}

export const defaultCoreSettings: CoreSettings = {
  environment: 'development',
  topupCooldownSeconds: 120,
  withdrawCooldownSeconds: 900,
  topupMin: 500,
  topupMax: 1_000_000,
  withdrawMin: 100,
  withdrawMax: 1_000_000,
  pageSizeDefault: 20,
  pageSizeMax: 100,
  otpRetentionSeconds: 86_400,
  providerTimeoutMs: PROVIDER_TIMEOUT_DEFAULT_MS,
  authorizationHoldDays: 7,
};
