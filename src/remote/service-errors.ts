/** What a card service's answer, or its silence, turns into besides a refusal (refusals.ts). */

/** The service did not answer usefully (down, too slow, 5xx, or an answer we cannot read). Nothing is known to have happened. */
export class ServiceUnavailableError extends Error {
  override readonly name = 'ServiceUnavailableError';
  constructor(
    message: string,
    readonly status?: number,
    /** From a 429's or 503's `Retry-After`. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** A POST or PATCH was sent and no answer came back: it may or may not have been carried out. */
export class OutcomeUnknownError extends Error {
  override readonly name = 'OutcomeUnknownError';
}

/** The HTTP status a refusal came with (refusals are our own errors, which carry none). */
export const refusalStatus = new WeakMap<Error, number>();

/** The HTTP status of a refusal or an unavailable service, when it answered at all. */
export function remoteStatusOf(error: unknown): number | undefined {
  if (error instanceof ServiceUnavailableError) return error.status;
  return error instanceof Error ? refusalStatus.get(error) : undefined;
}
