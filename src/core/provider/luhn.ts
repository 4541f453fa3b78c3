/** The Luhn check digit that completes `partial` (the number without its last digit). */
export function luhnCheckDigit(partial: string): number {
  let sum = 0;
  for (let i = 0; i < partial.length; i++) {
    let digit = Number(partial[partial.length - 1 - i]);
    if (i % 2 === 0) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return (10 - (sum % 10)) % 10;
}

export function isLuhnValid(number: string): boolean {
  if (!/^\d{2,}$/.test(number)) return false;
  return luhnCheckDigit(number.slice(0, -1)) === Number(number.at(-1));
}

/** Only the last 4 digits stay visible, as the spec's `masked_PAN` says. */
export function maskPan(pan: string): string {
  return `**** **** **** ${pan.slice(-4)}`;
}
