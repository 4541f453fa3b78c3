/**
 * The one base of the core's refusals: a code from a closed set, the refusal's figures (`params`) and
 * its text, built from the figures by the code's own wording. `CardServiceError` (cards, money, the HTTP
 * interface) and `DepositError` (deposit requests) are its two families; a caller that handles "a
 * refusal" whatever its family checks `isDomainRefusal`.
 *
 * @example class CardServiceError extends DomainRefusal<ErrorCode, ParamsOf<ErrorCode>> { … }
 */
export abstract class DomainRefusal<C extends string = string, P extends object = object> extends Error {
  readonly code: C;
  readonly params: P;

  protected constructor(code: C, params: P | undefined, wording: (params: P) => string) {
    const figures = params ?? ({} as P);
    super(wording(figures));
    this.code = code;
    this.params = figures;
  }

  /** The refusal as plain data (its code, figures and text), as a quote carries it. */
  toPlain(): PlainRefusal<C, P> {
    return { code: this.code, params: this.params, message: this.message };
  }
}

/** A refusal as plain data: what a quote returns for the refusal the operation would give. */
export interface PlainRefusal<C extends string = string, P extends object = object> {
  code: C;
  params: P;
  message: string;
}

export function isDomainRefusal(error: unknown): error is DomainRefusal {
  return error instanceof DomainRefusal;
}
