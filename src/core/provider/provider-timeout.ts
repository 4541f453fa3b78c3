import type { Cents } from '../ledger/money.js';
import { ProviderError, type CardProvider, type ProviderOperation } from './provider.js';

/** `PROVIDER_TIMEOUT_MS` unless set. */
export const PROVIDER_TIMEOUT_DEFAULT_MS = 20_000;

/**
 * The longest `PROVIDER_TIMEOUT_MS` may be: below the 30 s a freeze holds its card's status and a close
 * waits for another close (src/core/operations/card-status.ts, card-closure.ts), and well below the 60 s after which a pending operation is
 * settled as failed (`PENDING_GRACE_MS`), so that no call is still running once its operation is settled.
 */
export const PROVIDER_TIMEOUT_MAX_MS = 25_000;

/** A call given up that the provider answered with success all the same: what an operator needs to reconcile, no card data. */
export interface LateSuccess {
  operation: ProviderOperation;
  providerCardId: string | null;
  amount?: Cents;
  /** For an issue: whether the card it issued was terminated at once (nothing here refers to it). */
  terminated?: boolean;
}

export interface ProviderTimeoutOptions {
  timeoutMs: number;
  /** Told of each call given up that later succeeded; it never throws into the provider's promise. */
  onLateSuccess?: (late: LateSuccess) => void;
}

/**
 * The provider with every call given up after `timeoutMs`: the call's signal is aborted and the call fails
 * as a provider refusal (`Failed to close card: the card provider did not answer within 20 s`), so that the
 * operation takes its failure path while its pending record is young. Should the provider still succeed
 * afterwards, that is not lost: a card issued late is terminated at once (its creation failed and wrote no
 * card), and every late success is reported to `onLateSuccess`. Each call goes to `provider`'s method as it
 * is at that moment (tests replace them).
 *
 * @example const provider = withTimeout(new SandboxCardProvider({ clock }), { timeoutMs: 20_000, onLateSuccess: report })
 */
export function withTimeout(provider: CardProvider, { timeoutMs, onLateSuccess }: ProviderTimeoutOptions): CardProvider {
  const report = (late: LateSuccess) => {
    try {
      onLateSuccess?.(late);
    } catch {
      // A report that fails must not become an unhandled rejection of a call nobody awaits any more.
    }
  };

  async function timed<T>(call: (signal: AbortSignal) => Promise<T>, lateSuccess: (result: T) => Promise<LateSuccess>): Promise<T> {
    const controller = new AbortController();
    const work = new Promise<T>((resolve) => resolve(call(controller.signal)));
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new ProviderError(`the card provider did not answer within ${seconds(timeoutMs)}`);
        controller.abort(error);
        reject(error);
      }, timeoutMs);
    });
    try {
      return await Promise.race([work, expired]);
    } catch (error) {
      // Given up: a later failure changes nothing; a later success is seen.
      if (controller.signal.aborted) void work.then(lateSuccess).then(report, () => undefined);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  const lateOf = (operation: ProviderOperation, providerCardId: string, amount?: Cents) => async (): Promise<LateSuccess> => ({
    operation,
    providerCardId,
    ...(amount === undefined ? {} : { amount }),
  });

  return {
    issue: (request) =>
      timed(
        (signal) => provider.issue(request, { signal }),
        async (card) => {
          if (card.providerCardId === null) return { operation: 'issue', providerCardId: null, terminated: false };
          const id = card.providerCardId;
          const terminated = await timed((signal) => provider.terminate(id, { signal }), lateOf('terminate', id)).then(
            () => true,
            () => false,
          );
          return { operation: 'issue', providerCardId: id, terminated };
        },
      ),
    freeze: (id) => timed((signal) => provider.freeze(id, { signal }), lateOf('freeze', id)),
    unfreeze: (id) => timed((signal) => provider.unfreeze(id, { signal }), lateOf('unfreeze', id)),
    terminate: (id) => timed((signal) => provider.terminate(id, { signal }), lateOf('terminate', id)),
    withdraw: (id, amount) => timed((signal) => provider.withdraw(id, amount, { signal }), lateOf('withdraw', id, amount)),
    ...(provider.readDetails === undefined
      ? {}
      : { readDetails: (id) => timed((signal) => provider.readDetails!(id, { signal }), nothingToReport) }),
    ...(provider.stateOf === undefined ? {} : { stateOf: (id) => timed((signal) => provider.stateOf!(id, { signal }), nothingToReport) }),
    // A repeated issue answered late is the card the creation already has: nothing to reconcile.
    ...(provider.reissue === undefined
      ? {}
      : { reissue: (request) => timed((signal) => provider.reissue!(request, { signal }), nothingToReport) }),
  };
}

/** A read changes nothing at the provider: one answered after it was given up is not reported. */
const nothingToReport = (): Promise<LateSuccess> => Promise.reject(new Error('a read has nothing to reconcile'));

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
