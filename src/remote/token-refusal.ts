import { setTimeout as sleep } from 'node:timers/promises';
import { CardServiceError } from '../core/rules/errors.js';
import type { RemoteSession } from './client.js';

/** How long after a 401 the token is asked about again, by default: a service restarting or a proxy's hiccup has passed by then. */
export const CONFIRM_REFUSAL_DELAY_MS = 500;

/**
 * Whether a token the service just refused (401) is refused for good: asked again after `delayMs` with the
 * health check, which takes the token for exactly this. Only a second refusal confirms it; an answer, or
 * no answer (a service down says nothing of the token), does not, and the link stays.
 */
export async function tokenRefusalConfirmed(session: Pick<RemoteSession, 'health'>, delayMs = CONFIRM_REFUSAL_DELAY_MS): Promise<boolean> {
  if (delayMs > 0) await sleep(delayMs);
  try {
    await session.health();
    return false;
  } catch (error) {
    return error instanceof CardServiceError && error.code === 'INVALID_TOKEN';
  }
}
