import { createHmac, randomInt, randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { FakeCard, FakeRoute, FakeState, FakeTransaction } from './fake-lithic.js';
import {
  asaRequest,
  cardTransactionUpdated,
  type Overrides,
  responseSample,
  threeDsChallenge,
  tokenizationCode,
  type TransactionEvent,
} from './lithic-payloads.js';

// The fake Lithic's network side: the sandbox's simulations, which ask our ASA route (X-Lithic-HMAC over the
// canonical JSON) and send our events route what happened (Standard Webhooks), and 3-D Secure's challenges and
// their responses.

/** The routes of the simulations and of 3-D Secure, over the fake's state. */
export function networkRoutes(state: FakeState): FakeRoute[] {
  const {
    validator,
    problems,
    subscriptions,
    deliveries,
    cards,
    transactions,
    authentications,
    challengeResponses,
    walletCodes,
    asaSecret,
  } = state;

  /** Sends every subscription that takes it the event, signed with its secret, and keeps the route's answer. */
  const deliver = async (eventType: string, payload: Record<string, unknown>) => {
    problems.push(...validator.webhook(eventType, payload));
    for (const subscription of subscriptions.filter((s) => s.eventTypes.length === 0 || s.eventTypes.includes(eventType))) {
      const body = JSON.stringify(payload);
      const id = `msg_${randomUUID()}`;
      const at = new Date();
      const signature = new Webhook(subscription.secret).sign(id, at, body);
      const response = await fetch(subscription.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body,
      });
      const text = await response.text();
      deliveries.push({
        url: subscription.url,
        eventType,
        payload,
        status: response.status,
        answer: text === '' ? undefined : safeJson(text),
      });
    }
  };

  const sendTransaction = (transaction: FakeTransaction) =>
    deliver(
      'card_transaction.updated',
      cardTransactionUpdated(
        {
          cardToken: transaction.cardToken,
          amount: transaction.amount,
          token: transaction.token,
          status: transaction.status,
          settled: transaction.settled,
        },
        transaction.events,
        { result: transaction.result, merchant: { descriptor: transaction.descriptor, mcc: transaction.mcc } },
      ),
    );

  /** Asks our ASA route, as Lithic does: the canonical JSON signed with the ASA secret. */
  const askResponder = async (card: FakeCard, amount: number, descriptor: string, mcc: string, token: string): Promise<string> => {
    if (state.responderUrl === undefined) return 'APPROVED';
    const request = asaRequest({ cardToken: card.token, amount, descriptor, mcc, token });
    const body = canonicalJson(request);
    const id = `msg_${randomUUID()}`;
    const at = new Date();
    const response = await fetch(state.responderUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-lithic-hmac': createHmac('sha256', asaSecret).update(body).digest('base64'),
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': new Webhook(asaSecret).sign(id, at, body),
      },
      body,
      signal: AbortSignal.timeout(2_000),
    }).catch((cause: unknown) => ({ status: 0, text: async () => String(cause) }));
    const text = await response.text();
    if (response.status !== 200) {
      problems.push(`the ASA responder answered ${response.status}: ${text.slice(0, 200)}`);
      return 'UNKNOWN_HOST_TIMEOUT';
    }
    const answer = safeJson(text) as { result?: string; token?: string };
    const wrong = validator.schema('asa-response', answer);
    problems.push(...wrong.map((p) => `the ASA responder's answer: ${p}`));
    if (wrong.length > 0) return 'DECLINED';
    return answer.result === 'APPROVED' ? 'APPROVED' : (DECLINE_RESULT[answer.result ?? ''] ?? 'DECLINED');
  };

  return [
    [
      'POST',
      /^\/v1\/simulate\/authorize$/,
      async ({ body }) => {
        const card = [...cards.values()].find((c) => c.pan === body?.pan);
        if (!card) return lithicError(400, 'No card with that PAN');
        const amount = Number(body?.amount);
        const descriptor = String(body?.descriptor);
        const mcc = (body?.mcc as string | undefined) ?? '5812';
        const token = randomUUID();
        // Lithic declines on its own what its card states and types forbid, before asking the responder.
        let result: string;
        if (card.state !== 'OPEN') result = card.state === 'PAUSED' ? 'CARD_PAUSED' : 'CARD_CLOSED';
        else if (card.type === 'MERCHANT_LOCKED' && card.lockedTo !== undefined && card.lockedTo !== descriptor)
          result = 'UNAUTHORIZED_MERCHANT';
        else result = await askResponder(card, amount, descriptor, mcc, token);
        if (result === 'APPROVED' && card.type === 'MERCHANT_LOCKED') card.lockedTo ??= descriptor;
        const transaction: FakeTransaction = {
          token,
          cardToken: card.token,
          amount,
          descriptor,
          mcc,
          status: result === 'APPROVED' ? 'PENDING' : 'DECLINED',
          result,
          events: [{ token: randomUUID(), type: 'AUTHORIZATION', amount, result }],
          settled: 0,
        };
        transactions.set(token, transaction);
        await sendTransaction(transaction);
        return [201, { token, debugging_request_id: randomUUID() }];
      },
    ],
    [
      'POST',
      /^\/v1\/simulate\/clearing$/,
      async ({ body }) => {
        const transaction = transactions.get(String(body?.token));
        if (transaction?.status !== 'PENDING') return lithicError(422, 'No pending authorization with that token');
        const amount = (body?.amount as number | undefined) || transaction.amount;
        transaction.events.push({ token: randomUUID(), type: 'CLEARING', amount, result: 'APPROVED' });
        transaction.status = 'SETTLED';
        transaction.settled += amount;
        const card = cards.get(transaction.cardToken)!;
        if (card.type === 'SINGLE_USE') card.state = 'CLOSED';
        await sendTransaction(transaction);
        return [201, { debugging_request_id: randomUUID() }];
      },
    ],
    [
      'POST',
      /^\/v1\/simulate\/void$/,
      async ({ body }) => {
        const transaction = transactions.get(String(body?.token));
        if (transaction?.status !== 'PENDING') return lithicError(422, 'No pending authorization with that token');
        const type = (body?.type as 'AUTHORIZATION_REVERSAL' | 'AUTHORIZATION_EXPIRY' | undefined) ?? 'AUTHORIZATION_REVERSAL';
        transaction.events.push({
          token: randomUUID(),
          type: type as TransactionEvent['type'],
          amount: (body?.amount as number | undefined) ?? transaction.amount,
          result: 'APPROVED',
        });
        transaction.status = 'VOIDED';
        await sendTransaction(transaction);
        return [201, { debugging_request_id: randomUUID() }];
      },
    ],
    [
      'POST',
      /^\/v1\/simulate\/return$/,
      async ({ body }) => {
        const card = [...cards.values()].find((c) => c.pan === body?.pan);
        if (!card) return lithicError(400, 'No card with that PAN');
        const amount = -Math.abs(Number(body?.amount));
        const transaction: FakeTransaction = {
          token: randomUUID(),
          cardToken: card.token,
          amount,
          descriptor: String(body?.descriptor),
          mcc: '5812',
          status: 'SETTLED',
          result: 'APPROVED',
          events: [{ token: randomUUID(), type: 'RETURN', amount, result: 'APPROVED' }],
          settled: amount,
        };
        transactions.set(transaction.token, transaction);
        await sendTransaction(transaction);
        return [201, { token: transaction.token, debugging_request_id: randomUUID() }];
      },
    ],
    [
      'POST',
      /^\/v1\/three_ds_authentication\/simulate$/,
      async ({ body }) => {
        const card = [...cards.values()].find((c) => c.pan === body?.pan);
        if (!card) return lithicError(400, 'No card with that PAN');
        const token = randomUUID();
        authentications.set(token, { cardToken: card.token });
        const merchant = body?.merchant as { name: string };
        const transaction = body?.transaction as { amount: number };
        await deliver(
          'three_ds_authentication.challenge',
          threeDsChallenge({
            cardToken: card.token,
            token,
            amount: transaction.amount,
            merchant: merchant.name,
            expiry: new Date(Date.now() + 5 * 60_000),
          }),
        );
        return [201, { token }];
      },
    ],
    [
      'POST',
      /^\/v1\/simulate\/tokenizations$/,
      async ({ body }) => {
        const card = [...cards.values()].find((c) => c.pan === body?.pan);
        if (!card) return lithicError(400, 'No card with that PAN');
        const token = randomUUID();
        // The wallet asks for a code: Lithic sends it to be delivered by us, under both its event types.
        const authenticationCode = String(randomInt(1_000_000)).padStart(6, '0');
        walletCodes.push({ cardToken: card.token, code: authenticationCode });
        for (const eventType of [
          'tokenization.two_factor_authentication_code',
          'digital_wallet.tokenization_two_factor_authentication_code',
        ] as const) {
          await deliver(
            eventType,
            tokenizationCode({ cardToken: card.token, authenticationCode, tokenizationToken: token }, {}, eventType),
          );
        }
        return [201, responseSample('POST', '/v1/simulate/tokenizations', 201, { token, card_token: card.token, status: 'INACTIVE' })];
      },
    ],
    [
      'POST',
      /^\/v1\/three_ds_decisioning\/challenge_response$/,
      async ({ body }) => {
        const authentication = authentications.get(String(body?.token));
        if (!authentication) return [404];
        if (authentication.answer !== undefined) return [422, { message: 'A response was already set for this challenge' }];
        authentication.answer = String(body?.challenge_response);
        challengeResponses.push({ token: String(body?.token), challenge_response: authentication.answer });
        return [200];
      },
    ],
  ];
}

/** Lithic's error body. */
export const lithicError = (status: number, message: string): [number, unknown] => [
  status,
  { debugging_request_id: randomUUID(), message },
];

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The `transaction_event.result` Lithic records for a responder's decline (`asa-response.result`). */
const DECLINE_RESULT: Record<string, string> = {
  AVS_INVALID: 'DECLINED',
  CARD_PAUSED: 'CARD_PAUSED',
  INSUFFICIENT_FUNDS: 'INSUFFICIENT_FUNDS',
  UNAUTHORIZED_MERCHANT: 'UNAUTHORIZED_MERCHANT',
  VELOCITY_EXCEEDED: 'USER_TRANSACTION_LIMIT',
  SUSPECTED_FRAUD: 'SUSPECTED_FRAUD',
};

/** Lithic signs the ASA request's JSON with its keys sorted and no spaces. */
function canonicalJson(value: unknown): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Overrides)[k])]),
          )
        : v;
  return JSON.stringify(sorted(value));
}
