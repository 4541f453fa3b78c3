import { createHmac, randomBytes, randomInt, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { lithicValidator, type Problems } from './lithic-openapi.js';
import {
  asaRequest,
  cardTransactionUpdated,
  type Overrides,
  responseSample,
  schemaSample,
  threeDsChallenge,
  tokenizationCode,
  type TransactionEvent,
} from './lithic-payloads.js';

// A stateful fake Lithic of our own, for behaviour (Prism, for the contract, answers only the document's examples):
// cards with their states, the responder endpoint and event subscriptions with their secrets, and the sandbox's
// simulations, which ask our ASA route (signed with X-Lithic-HMAC) and send our events route card_transaction.updated
// and three_ds_authentication.challenge (signed as Standard Webhooks). Every request it receives and every answer it
// gives is checked against Lithic's document; anything the document does not allow is kept in `problems` (a test
// asserts it empty) and answered 422 or 500 as Lithic would fail.

export type CardState = 'OPEN' | 'PAUSED' | 'CLOSED';

export interface FakeCard {
  token: string;
  type: string;
  state: CardState;
  memo: string;
  pan: string;
  cvv: string;
  expMonth: string;
  expYear: string;
  created: string;
  /** A merchant-locked card's merchant: the first one it was used at. */
  lockedTo?: string;
}

export interface FakeTransaction {
  token: string;
  cardToken: string;
  amount: number;
  descriptor: string;
  mcc: string;
  status: 'PENDING' | 'SETTLED' | 'VOIDED' | 'DECLINED';
  /** The result Lithic recorded (APPROVED, or why it declined). */
  result: string;
  events: Required<Omit<TransactionEvent, 'created'>>[];
  settled: number;
}

/** An event sent to one of our routes, and what the route answered. */
export interface Delivery {
  url: string;
  eventType: string;
  payload: Record<string, unknown>;
  status: number;
  answer: unknown;
}

export interface FakeLithicOptions {
  apiKey?: string;
  /** Where ASA requests go before anyone enrolls (`POST /v1/responder_endpoints` replaces it). */
  asaUrl?: string;
  /** An event subscription made at start (`POST /v1/event_subscriptions` adds others). */
  eventsUrl?: string;
}

export interface FakeLithic {
  url: string;
  apiKey: string;
  /** The ASA secret (`GET /v1/auth_stream/secret`). */
  asaSecret: string;
  /** The secret of the subscription made at start (`eventsUrl`). */
  webhookSecret: string;
  cards: Map<string, FakeCard>;
  transactions: Map<string, FakeTransaction>;
  /** Every answer to `POST /v1/three_ds_decisioning/challenge_response`, in order. */
  challengeResponses: { token: string; challenge_response: string }[];
  /** The 3-D Secure authentications opened by `/v1/three_ds_authentication/simulate`, by token. */
  authentications: Map<string, { cardToken: string; answer?: string }>;
  /** The codes digital wallets asked for (`/v1/simulate/tokenizations`), in order. */
  walletCodes: { cardToken: string; code: string }[];
  deliveries: Delivery[];
  /** What the document does not allow, in what we sent the fake or what the fake or our routes answered. */
  problems: Problems;
  responder(): string | undefined;
  subscriptions(): { token: string; url: string; secret: string; eventTypes: string[] }[];
  stop(): Promise<void>;
}

type Handler = (request: {
  body: Record<string, unknown> | undefined;
  params: string[];
  query: URLSearchParams;
}) => Promise<[number, unknown?]>;

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeLithic(options: FakeLithicOptions = {}): Promise<FakeLithic> {
  const validator = lithicValidator();
  const secret = () => `whsec_${randomBytes(24).toString('base64')}`;
  const apiKey = options.apiKey ?? `test-key-${randomUUID()}`;
  const cards = new Map<string, FakeCard>();
  const byIdempotencyKey = new Map<string, string>();
  const transactions = new Map<string, FakeTransaction>();
  const authentications = new Map<string, { cardToken: string; answer?: string }>();
  const challengeResponses: FakeLithic['challengeResponses'] = [];
  const walletCodes: FakeLithic['walletCodes'] = [];
  const deliveries: Delivery[] = [];
  const problems: Problems = [];
  const asaSecret = secret();
  const webhookSecret = secret();
  let responderUrl = options.asaUrl;
  const subscriptions: ReturnType<FakeLithic['subscriptions']> = [];
  if (options.eventsUrl) subscriptions.push({ token: `ep_${randomUUID()}`, url: options.eventsUrl, secret: webhookSecret, eventTypes: [] });

  /** The card as the document's card responses carry it (their other required fields sampled from the document). */
  const cardBody = (card: FakeCard, pci: boolean) =>
    pci
      ? responseSample('GET', `/v1/cards/${card.token}`, 200, cardFields(card, true))
      : schemaSample('non_pci_card_response', cardFields(card, false));
  const cardFields = (card: FakeCard, pci: boolean) => ({
    token: card.token,
    type: card.type,
    state: card.state,
    memo: card.memo,
    last_four: card.pan.slice(-4),
    exp_month: card.expMonth,
    exp_year: card.expYear,
    created: card.created,
    ...(pci ? { pan: card.pan, cvv: card.cvv } : {}),
  });
  const error = (status: number, message: string): [number, unknown] => [status, { debugging_request_id: randomUUID(), message }];
  const cardOf = (token: string | undefined) => (token === undefined ? undefined : cards.get(token));

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
    if (responderUrl === undefined) return 'APPROVED';
    const request = asaRequest({ cardToken: card.token, amount, descriptor, mcc, token });
    const body = canonicalJson(request);
    const id = `msg_${randomUUID()}`;
    const at = new Date();
    const response = await fetch(responderUrl, {
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

  const routes: [string, RegExp, Handler][] = [
    [
      'GET',
      /^\/v1\/cards$/,
      async ({ query }) => {
        const memo = query.get('memo');
        const data = [...cards.values()].filter((c) => memo === null || c.memo === memo).map((c) => cardBody(c, false));
        return [200, { data, has_more: false }];
      },
    ],
    [
      'POST',
      /^\/v1\/cards$/,
      async ({ body }) => {
        const key = body?.idempotencyKey as string | undefined;
        const again = key === undefined ? undefined : cardOf(byIdempotencyKey.get(key));
        if (again) return [200, cardBody(again, true)];
        const partial = `4111110${Array.from({ length: 8 }, () => randomInt(10)).join('')}`;
        const card: FakeCard = {
          token: randomUUID(),
          type: String(body?.type),
          state: (body?.state as CardState | undefined) ?? 'OPEN',
          memo: (body?.memo as string | undefined) ?? '',
          pan: partial + luhnDigit(partial),
          cvv: String(randomInt(1000)).padStart(3, '0'),
          expMonth: '06',
          expYear: String(new Date().getUTCFullYear() + 3),
          created: new Date().toISOString(),
        };
        cards.set(card.token, card);
        if (key !== undefined) byIdempotencyKey.set(key, card.token);
        return [200, cardBody(card, true)];
      },
    ],
    [
      'GET',
      /^\/v1\/cards\/([^/]+)$/,
      async ({ params }) => {
        const card = cardOf(params[0]);
        return card ? [200, cardBody(card, true)] : error(404, 'Card not found');
      },
    ],
    [
      'PATCH',
      /^\/v1\/cards\/([^/]+)$/,
      async ({ params, body }) => {
        const card = cardOf(params[0]);
        if (!card) return error(404, 'Card not found');
        if (card.state === 'CLOSED') return error(422, 'A closed card cannot be changed');
        if (body?.state !== undefined) card.state = body.state as CardState;
        if (typeof body?.memo === 'string') card.memo = body.memo;
        return [200, cardBody(card, true)];
      },
    ],
    ['GET', /^\/v1\/responder_endpoints$/, async () => [200, { enrolled: responderUrl !== undefined, url: responderUrl ?? null }]],
    [
      'POST',
      /^\/v1\/responder_endpoints$/,
      async ({ body }) => {
        if (body?.type !== 'AUTH_STREAM_ACCESS') return error(400, 'Only AUTH_STREAM_ACCESS is faked');
        responderUrl = String(body.url);
        return [200, { enrolled: true }];
      },
    ],
    ['GET', /^\/v1\/auth_stream\/secret$/, async () => [200, { secret: asaSecret }]],
    [
      'POST',
      /^\/v1\/event_subscriptions$/,
      async ({ body }) => {
        const subscription = {
          token: `ep_${randomUUID()}`,
          url: String(body?.url),
          secret: secret(),
          eventTypes: (body?.event_types as string[]) ?? [],
        };
        subscriptions.push(subscription);
        return [
          201,
          {
            token: subscription.token,
            url: subscription.url,
            description: String(body?.description ?? ''),
            disabled: false,
            event_types: subscription.eventTypes,
          },
        ];
      },
    ],
    [
      'GET',
      /^\/v1\/event_subscriptions\/([^/]+)\/secret$/,
      async ({ params }) => {
        const subscription = subscriptions.find((s) => s.token === params[0]);
        return subscription ? [200, { secret: subscription.secret }] : error(404, 'Subscription not found');
      },
    ],
    [
      'POST',
      /^\/v1\/simulate\/authorize$/,
      async ({ body }) => {
        const card = [...cards.values()].find((c) => c.pan === body?.pan);
        if (!card) return error(400, 'No card with that PAN');
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
        if (transaction?.status !== 'PENDING') return error(422, 'No pending authorization with that token');
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
        if (transaction?.status !== 'PENDING') return error(422, 'No pending authorization with that token');
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
        if (!card) return error(400, 'No card with that PAN');
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
        if (!card) return error(400, 'No card with that PAN');
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
        if (!card) return error(400, 'No card with that PAN');
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

  const serve = async (request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    const method = request.method ?? 'GET';
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString();
    const reply = (status: number, body?: unknown) => {
      if (body === undefined) response.writeHead(status).end();
      else response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (request.headers.authorization !== apiKey) return reply(...error(401, 'Please provide API key in Authorization header'));
    const body = text === '' ? undefined : (safeJson(text) as Record<string, unknown>);
    const wrong = validator.request(method, url.pathname, body);
    if (wrong.length > 0) {
      problems.push(...wrong.map((p) => `sent to the fake: ${p}`));
      return reply(...error(422, wrong.join('; ')));
    }
    const route = routes.find(([m, pattern]) => m === method && pattern.test(url.pathname));
    if (!route) {
      problems.push(`sent to the fake: ${method} ${url.pathname}, which it does not fake`);
      return reply(...error(404, 'Not faked'));
    }
    const params = route[1].exec(url.pathname)!.slice(1).map(decodeURIComponent);
    const idempotencyKey = request.headers['idempotency-key'];
    const withKey = typeof idempotencyKey === 'string' && method === 'POST' ? { ...body, idempotencyKey } : body;
    const [status, answer] = await route[2]({ body: withKey, params, query: url.searchParams });
    const notAllowed = validator.response(method, url.pathname, status, answer);
    if (notAllowed.length > 0) {
      problems.push(...notAllowed.map((p) => `the fake's answer: ${p}`));
      return reply(500, { message: notAllowed.join('; ') });
    }
    reply(status, answer);
  };

  const server = createServer((request, response) => {
    serve(request, response).catch((cause: unknown) => {
      problems.push(`the fake failed: ${String(cause)}`);
      if (!response.headersSent) response.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    asaSecret,
    webhookSecret,
    cards,
    transactions,
    challengeResponses,
    walletCodes,
    authentications,
    deliveries,
    problems,
    responder: () => responderUrl,
    subscriptions: () => subscriptions,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
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

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function luhnDigit(partial: string): string {
  let sum = 0;
  for (let i = 0; i < partial.length; i++) {
    let digit = Number(partial[partial.length - 1 - i]);
    if (i % 2 === 0) digit *= 2;
    sum += digit > 9 ? digit - 9 : digit;
  }
  return String((10 - (sum % 10)) % 10);
}
