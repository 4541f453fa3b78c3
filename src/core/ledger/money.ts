import type { Cents } from '../../interface/objects.js';

/** Integer cents (the interface's objects declare it). Every amount inside the core is one of these; decimals exist only at the edges. */
export type { Cents };

/** How far from a whole cent binary floating point may put an amount that has 2 decimals (0.1 + 5.2). */
const FLOAT_NOISE_CENTS = 1e-6;

/**
 * A decimal USD amount to cents, or null when it is not finite or has more than 2 decimal places.
 * The tolerance is absolute, in cents: a third decimal (1000.001) is refused however large the amount.
 */
export function toCents(amount: number): Cents | null {
  if (!Number.isFinite(amount)) return null;
  const scaled = amount * 100;
  const cents = Math.round(scaled);
  if (!Number.isSafeInteger(cents) || Math.abs(scaled - cents) > FLOAT_NOISE_CENTS) return null;
  return cents === 0 ? 0 : cents;
}

/** The rule in words, for refusals and descriptions: `Amount must have at most 2 decimal places`. */
export const AT_MOST_TWO_DECIMALS = 'at most 2 decimal places';

export function hasAtMostTwoDecimals(amount: number): boolean {
  return toCents(amount) !== null;
}

/** Cents as the spec's JSON number (at most 2 decimals). */
export function toAmount(cents: Cents): number {
  return cents / 100;
}

/** Cents as text with exactly two decimals: 1234 → "12.34". */
export function formatAmount(cents: Cents): string {
  const sign = cents < 0 ? '-' : '';
  const abs = Math.abs(cents);
  return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, '0')}`;
}

/** `value × bps / 10000`, rounded half-up to the cent, in integers only. */
export function percentOf(cents: Cents, basisPoints: number): Cents {
  return Math.floor((cents * basisPoints + 5000) / 10000);
}
