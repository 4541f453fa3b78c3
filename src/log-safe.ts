import { GrammyError, HttpError } from 'grammy';

/**
 * An error as it may be logged. A failed Bot API call carries its request payload (which can hold
 * card details, an OTP or the webhook secret) and a network failure the request URL (which holds the
 * bot token); only the method, code, description and grammY's own message are kept from them.
 */
export function loggableError(error: unknown): Record<string, unknown> {
  if (error instanceof GrammyError) {
    return { type: 'GrammyError', method: error.method, errorCode: error.error_code, description: error.description };
  }
  if (error instanceof HttpError) return { type: 'HttpError', message: error.message };
  if (error instanceof Error) return { type: error.name, message: error.message, stack: error.stack };
  return { type: typeof error, message: String(error) };
}

/** A loggable error in one line, for an operator's message: its type and what it says. */
export function errorSummary(err: Record<string, unknown>): string {
  return `${String(err.type)}: ${String(err.message ?? err.description)}`;
}
