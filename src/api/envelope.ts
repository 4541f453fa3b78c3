import type { ValidationIssue } from '../core/rules/errors.js';
import { isoTime } from '../infra/clock.js';

/** The spec's response envelope (section 2.1). Every response carries `timestamp`. */
export interface SuccessEnvelope<T> {
  success: true;
  data: T;
  message: string;
  timestamp: string;
}

export interface ErrorEnvelope {
  success: false;
  message?: string;
  error?: string | ValidationIssue[];
  timestamp: string;
}

export function ok<T>(data: T, message: string, now: Date): SuccessEnvelope<T> {
  return { success: true, data, message, timestamp: isoTime(now) };
}

/**
 * An error body. `errorField` puts the text in `error` instead of `message`, as the spec's OTP
 * endpoints do; validation errors carry the text in `message` and the items in `error`.
 */
export function failure(text: string, now: Date, options: { errorField?: boolean; issues?: ValidationIssue[] } = {}): ErrorEnvelope {
  const timestamp = isoTime(now);
  if (options.issues) return { success: false, message: text, error: options.issues, timestamp };
  if (options.errorField) return { success: false, error: text, timestamp };
  return { success: false, message: text, timestamp };
}
