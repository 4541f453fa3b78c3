/** Refusals of admin commands (bad ids, bad values): plain errors with a clear text. */
export class AdminError extends Error {
  override readonly name = 'AdminError';
}
