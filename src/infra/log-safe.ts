import { GrammyError, HttpError } from 'grammy';

/**
 * An error as it may be logged. A failed Bot API call carries its request payload (which can hold
 * card details, an OTP or the webhook secret) and a network failure the request URL (which holds the
 * bot token); only the method, code, description and grammY's own message are kept from them.
 */
export function loggableError(error: unknown): Record<string, unknown> {
  if (typeof error === 'object' && error !== null && made.has(error)) return error as Record<string, unknown>;
  const loggable = describe(error);
  made.add(loggable);
  return loggable;
}

/** What `loggableError` made, so the logger's serializer passes it through instead of describing it again. */
const made = new WeakSet<object>();

function describe(error: unknown): Record<string, unknown> {
  if (error instanceof GrammyError) {
    return { type: 'GrammyError', method: error.method, errorCode: error.error_code, description: error.description };
  }
  if (error instanceof HttpError) return { type: 'HttpError', message: error.message };
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return { type: error.name, message: error.message, ...(typeof code === 'string' ? { code } : {}), stack: error.stack };
  }
  // Anything else (a plain object that may carry a payload) is named, never dumped.
  return { type: typeof error, message: typeof error === 'object' && error !== null ? '[object]' : String(error) };
}

/** A loggable error in one line, for an operator's message: its type and what it says. */
export function errorSummary(err: Record<string, unknown>): string {
  return `${String(err.type)}: ${String(err.message ?? err.description)}`;
}
