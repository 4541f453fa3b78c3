import countries from 'i18n-iso-countries';
import type { Merchant } from '../../authorization/types.js';

/** Lithic's merchant (its `merchant` schema): the fields the engine reads. */
export interface LithicMerchant {
  descriptor: string;
  mcc: string;
  /** ISO 3166-1 alpha-3, or QZZ (Kosovo), ANT (Netherlands Antilles). */
  country: string;
}

const MERCHANT_NAME_MAX = 100;
const SPECIAL_COUNTRIES: Record<string, string> = { QZZ: 'XK', ANT: 'AN' };
/** ISO 3166's user-assigned "unknown" code, for a country Lithic leaves empty or we cannot read. */
const UNKNOWN_COUNTRY = 'ZZ';
/** No category group holds it, so no control blocks a purchase whose MCC is missing. */
const UNKNOWN_MCC = '0000';

/** Lithic's merchant as the engine takes it: its descriptor as the name, the country in alpha-2. */
export function merchantOf(merchant: LithicMerchant): Merchant {
  const name = merchant.descriptor.trim().slice(0, MERCHANT_NAME_MAX).trim() || 'Unknown merchant';
  const mcc = /^\d{4}$/.test(merchant.mcc) ? merchant.mcc : UNKNOWN_MCC;
  return { name, mcc, country: countryOf(merchant.country) };
}

export function countryOf(alpha3: string): string {
  const code = alpha3.trim().toUpperCase();
  if (/^[A-Z]{2}$/.test(code)) return code;
  return SPECIAL_COUNTRIES[code] ?? countries.alpha3ToAlpha2(code) ?? UNKNOWN_COUNTRY;
}
