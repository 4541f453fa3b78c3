import { parse } from 'lossless-json';

/** A body that is not JSON, carries a key that could poison prototypes, or names a key twice. */
export class MalformedJsonError extends Error {
  override readonly name = 'MalformedJsonError';
  readonly statusCode = 400;
  readonly code = 'FST_ERR_CTP_INVALID_JSON_BODY';
}

function refusePrototypeKeys(key: string, value: unknown): unknown {
  if (key === '__proto__' || key === 'constructor' || key === 'prototype') throw new MalformedJsonError();
  return value;
}

/**
 * Strict JSON: an empty body is no body; `__proto__`/`constructor` keys and duplicate keys are refused
 * outright. Numbers are read from their text as written (lossless-json hands each literal over before
 * it becomes a double), see `keepThirdDecimal`.
 */
export function parseJsonBody(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return parse(text, refusePrototypeKeys, numberAsWritten);
  } catch {
    throw new MalformedJsonError();
  }
}

function numberAsWritten(literal: string): number {
  return Number(keepThirdDecimal(literal));
}

const PARTS = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * Every number in a request body is money (at most 2 decimals) or an integer, and a double cannot
 * hold what a literal may say past its 17th digit: `5.0000000000000000001` would become 5. So a
 * literal with a nonzero digit past the second decimal, its exponent considered, becomes its first
 * two decimals followed by a 5 (`5.0000000000000000001` → `5.005`, `1.23e-1` → `0.125`): a visible
 * third decimal that the double keeps, strictly between the same two whole cents as the written
 * number. The schemas then refuse it as they refuse `5.001` (`Amount must have at most 2 decimal
 * places`, `Plan ID must be an integer`), and it compares with every whole-cent bound as the written
 * number does. Trailing zeros (`5.000`) and exponents landing on whole cents (`500e-2`, `0.5e1`)
 * are left as they are.
 */
function keepThirdDecimal(literal: string): string {
  const [, sign = '', int = '', fraction = '', exponent = '0'] = PARTS.exec(literal) ?? [];
  if (fraction.length <= 2 && exponent === '0') return literal;
  const digits = int + fraction;
  // Where the decimal point falls among the digits; a far-off exponent only moves every digit to one side.
  const shift = Math.max(-digits.length - 3, Math.min(digits.length + 3, Number(exponent)));
  const point = int.length + shift;
  if (!/[1-9]/.test(digits.slice(Math.max(0, point + 2)))) return literal;
  const digit = (i: number) => (i >= 0 && i < digits.length ? digits[i] : '0');
  const whole = point > 0 ? digits.slice(0, point) : '0';
  return `${sign}${whole}.${digit(point)}${digit(point + 1)}5`;
}
