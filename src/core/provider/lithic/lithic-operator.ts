import { z } from 'zod';
import { ProviderError } from '../provider.js';
import { LithicApiError, type LithicClient } from './lithic-client.js';

// What the operator asks of Lithic from the admin command line (`provider lithic …`): whether it is reachable
// and enrolled, the enrolment of our two routes, and the sandbox's simulations.

/** The routes Lithic calls, under the service's public URL: Auth Stream Access, and the events. */
export const LITHIC_ROUTES = { asa: '/provider/lithic/asa', events: '/provider/lithic/events' } as const;

/**
 * The events the subscription asks for (docs/lithic.md): the wallet code by the type Lithic recommends, not its
 * deprecated `digital_wallet.` twin (the service handles both, but subscribed to both it would push each code twice).
 */
export const LITHIC_EVENT_TYPES = [
  'card_transaction.updated',
  'three_ds_authentication.challenge',
  'tokenization.two_factor_authentication_code',
] as const;

const responder = z.object({ enrolled: z.boolean().optional(), url: z.string().nullish() });
const secret = z.object({ secret: z.string().min(1) });
const subscription = z.object({ token: z.string().min(1), url: z.string().optional() });
const simulated = z.object({ token: z.string().optional(), debugging_request_id: z.string().optional() });

export interface LithicStatus {
  reachable: boolean;
  keyValid: boolean;
  asaEnrolled: boolean;
  asaUrl: string | null;
  /** Why it is not reachable or the key not valid, in Lithic's words. */
  problem?: string;
}

export interface LithicEnrolment {
  asaUrl: string;
  eventsUrl: string;
  subscriptionToken: string;
  /** The two signing secrets, stored by `provider lithic enroll` (src/core/keys/provider-secrets.ts) in place of `LITHIC_ASA_SECRET` and `LITHIC_WEBHOOK_SECRET`. */
  asaSecret: string;
  webhookSecret: string;
}

export type LithicSimulation =
  | { kind: 'authorize'; pan: string; amount: number; descriptor: string; mcc?: string }
  | { kind: 'clear' | 'void'; transactionToken: string; amount?: number }
  | { kind: 'return'; pan: string; amount: number; descriptor: string };

/**
 * `provider lithic status`: the ASA responder endpoint's status (`GET /v1/responder_endpoints`), which needs a
 * valid key, so one call answers all three questions.
 */
export async function lithicStatus(client: LithicClient): Promise<LithicStatus> {
  try {
    const asa = await client.request({
      method: 'GET',
      path: '/v1/responder_endpoints',
      query: { type: 'AUTH_STREAM_ACCESS' },
      answer: responder,
    });
    return { reachable: true, keyValid: true, asaEnrolled: asa.enrolled === true, asaUrl: asa.url ?? null };
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    // An answer, even a refusal, says Lithic is reachable; any refusal of this read says the key is not usable.
    return { reachable: error instanceof LithicApiError, keyValid: false, asaEnrolled: false, asaUrl: null, problem: error.message };
  }
}

/**
 * `provider lithic enroll --url`: `<url>/provider/lithic/asa` as the Auth Stream Access responder
 * (`POST /v1/responder_endpoints`), `<url>/provider/lithic/events` as an event subscription
 * (`POST /v1/event_subscriptions`), and both signing secrets read back.
 */
export async function lithicEnroll(client: LithicClient, publicUrl: string): Promise<LithicEnrolment> {
  const base = publicUrl.replace(/\/+$/, '');
  const asaUrl = `${base}${LITHIC_ROUTES.asa}`;
  const eventsUrl = `${base}${LITHIC_ROUTES.events}`;
  await client.request({
    method: 'POST',
    path: '/v1/responder_endpoints',
    body: { type: 'AUTH_STREAM_ACCESS', url: asaUrl },
    answer: responder,
  });
  const created = await client.request({
    method: 'POST',
    path: '/v1/event_subscriptions',
    body: { url: eventsUrl, description: 'virtual-cards-bot events', event_types: [...LITHIC_EVENT_TYPES] },
    answer: subscription,
  });
  const asaSecret = await client.request({ method: 'GET', path: '/v1/auth_stream/secret', answer: secret });
  const webhookSecret = await client.request({
    method: 'GET',
    path: `/v1/event_subscriptions/${encodeURIComponent(created.token)}/secret`,
    answer: secret,
  });
  return { asaUrl, eventsUrl, subscriptionToken: created.token, asaSecret: asaSecret.secret, webhookSecret: webhookSecret.secret };
}

/** `provider lithic simulate …` through Lithic's `/v1/simulate/*` (its sandbox only): the transaction's token. */
export async function lithicSimulate(client: LithicClient, simulation: LithicSimulation): Promise<string | null> {
  const { path, body } = simulationRequest(simulation);
  const answer = await client.request({ method: 'POST', path, body, answer: simulated });
  return answer.token ?? null;
}

function simulationRequest(s: LithicSimulation): { path: string; body: Record<string, unknown> } {
  switch (s.kind) {
    case 'authorize':
      return {
        path: '/v1/simulate/authorize',
        body: { pan: s.pan, amount: s.amount, descriptor: s.descriptor, ...(s.mcc === undefined ? {} : { mcc: s.mcc }) },
      };
    case 'clear':
    case 'void':
      return {
        path: `/v1/simulate/${s.kind === 'clear' ? 'clearing' : 'void'}`,
        body: { token: s.transactionToken, ...(s.amount === undefined ? {} : { amount: s.amount }) },
      };
    case 'return':
      return { path: '/v1/simulate/return', body: { pan: s.pan, amount: s.amount, descriptor: s.descriptor } };
  }
}
