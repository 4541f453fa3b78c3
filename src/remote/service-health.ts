import type { Logger } from '../infra/logger.js';

export interface ServiceHealth {
  /** For the client's `observe`. */
  answered(): void;
  unavailable(error: Error): void;
  /** For `/readyz`: the last exchange was answered; while down, a light probe (the health route, no token) may find it back. */
  ready(): Promise<boolean>;
}

/**
 * Whether the card service answers, as the bot's own requests find it: one log line when an outage starts,
 * one when it ends (with how long and how many requests failed), never one per request.
 *
 * @example
 * const health = serviceHealth({ baseUrl, logger, timeoutMs });
 * const client = createRemoteCardClient({ baseUrl, timeoutMs, observe: health });
 */
export function serviceHealth(options: { baseUrl: string; logger: Logger; timeoutMs: number; fetch?: typeof fetch }): ServiceHealth {
  const service = new URL(options.baseUrl).host;
  const fetchFn = options.fetch ?? fetch;
  let down: { since: number; failures: number } | undefined;
  const health: ServiceHealth = {
    answered() {
      if (down === undefined) return;
      options.logger.info({ service, downForMs: Date.now() - down.since, failures: down.failures }, 'the card service answers again');
      down = undefined;
    },
    unavailable(error) {
      if (down !== undefined) {
        down.failures++;
        return;
      }
      down = { since: Date.now(), failures: 1 };
      options.logger.error({ service, reason: error.message }, 'the card service is not answering');
    },
    async ready() {
      if (down === undefined) return true;
      try {
        // Without a token: any answer below 500 (a 401 included) is a service that answers; a redirect is
        // not followed (as the client follows none) and is no answer.
        const response = await fetchFn(`${options.baseUrl.replace(/\/+$/, '')}/api/v1/health`, {
          signal: AbortSignal.timeout(options.timeoutMs),
          redirect: 'manual',
        });
        await response.body?.cancel();
        if (response.status < 300 || (response.status >= 400 && response.status < 500)) health.answered();
      } catch {
        // still down
      }
      return down === undefined;
    },
  };
  return health;
}
