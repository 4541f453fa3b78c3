import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { lithicError as error, networkRoutes, safeJson } from './fake-lithic-network.js';
import { type LithicValidator, lithicValidator, type Problems } from './lithic-openapi.js';
import { responseSample, schemaSample, type TransactionEvent } from './lithic-payloads.js';

// A stateful fake Lithic of our own, for behaviour (Prism, for the contract, answers only the document's examples):
// cards with their states, the responder endpoint and event subscriptions with their secrets, and the sandbox's
// simulations, which ask our ASA route (signed with X-Lithic-HMAC) and send our events route card_transaction.updated
// and three_ds_authentication.challenge (signed as Standard Webhooks; fake-lithic-network.ts). Every request it receives and every answer it
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
  subscriptions(): Subscription[];
  stop(): Promise<void>;
}

export interface Subscription {
  token: string;
  url: string;
  secret: string;
  eventTypes: string[];
}

/** What the fake keeps, shared by its card routes and its network routes. */
export interface FakeState
  extends Pick<
    FakeLithic,
    'cards' | 'transactions' | 'authentications' | 'challengeResponses' | 'walletCodes' | 'deliveries' | 'problems' | 'asaSecret'
  > {
  validator: LithicValidator;
  /** The ASA responder's URL, once enrolled. */
  responderUrl: string | undefined;
  subscriptions: Subscription[];
}

/** One faked operation: its method, its path, and what it answers (status and JSON body). */
export type FakeRoute = [
  method: string,
  path: RegExp,
  handler: (request: {
    body: Record<string, unknown> | undefined;
    params: string[];
    query: URLSearchParams;
  }) => Promise<[number, unknown?]>,
];

/** Starts the fake on a free port of 127.0.0.1. */
export async function startFakeLithic(options: FakeLithicOptions = {}): Promise<FakeLithic> {
  const secret = () => `whsec_${randomBytes(24).toString('base64')}`;
  const apiKey = options.apiKey ?? `test-key-${randomUUID()}`;
  const webhookSecret = secret();
  const state: FakeState = {
    validator: lithicValidator(),
    cards: new Map(),
    transactions: new Map(),
    authentications: new Map(),
    challengeResponses: [],
    walletCodes: [],
    deliveries: [],
    problems: [],
    asaSecret: secret(),
    responderUrl: options.asaUrl,
    subscriptions: [],
  };
  const { validator, cards, problems, asaSecret, subscriptions } = state;
  if (options.eventsUrl) subscriptions.push({ token: `ep_${randomUUID()}`, url: options.eventsUrl, secret: webhookSecret, eventTypes: [] });
  const byIdempotencyKey = new Map<string, string>();

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
  const cardOf = (token: string | undefined) => (token === undefined ? undefined : cards.get(token));

  const routes: FakeRoute[] = [
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
    [
      'GET',
      /^\/v1\/responder_endpoints$/,
      async () => [200, { enrolled: state.responderUrl !== undefined, url: state.responderUrl ?? null }],
    ],
    [
      'POST',
      /^\/v1\/responder_endpoints$/,
      async ({ body }) => {
        if (body?.type !== 'AUTH_STREAM_ACCESS') return error(400, 'Only AUTH_STREAM_ACCESS is faked');
        state.responderUrl = String(body.url);
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
    ...networkRoutes(state),
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
    transactions: state.transactions,
    challengeResponses: state.challengeResponses,
    walletCodes: state.walletCodes,
    authentications: state.authentications,
    deliveries: state.deliveries,
    problems,
    responder: () => state.responderUrl,
    subscriptions: () => subscriptions,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
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
