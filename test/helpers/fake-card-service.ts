import { randomInt, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A card service written from the interface's text alone (spec sections 2 to 8), not from our server: what a
 * remote-mode bot meets in the wild. Each token answers in the earlier or the current shapes; refusals come as
 * 400, a missing card as 403, a cooldown as 200 with `success: false`; no card listing, no top-up quote, and
 * `Idempotency-Key` ignored. State lives in memory; the clock is the test's.
 */

export type Shape = 'earlier' | 'current';

interface FakeUser {
  id: string;
  shape: Shape;
  /** Wallet, in cents. */
  wallet: number;
  walletUpdatedAt: string;
}

interface FakeCard {
  id: string;
  userId: string;
  name: string;
  pan: string;
  cvv: string;
  exp: string;
  /** Cents. */
  balance: number;
  deposit: number;
  limit: number;
  category: 'Wallet' | 'Online';
  status: 'Processing' | 'active' | 'frozen' | 'closed';
  binId: string;
  createdAt: string;
  updatedAt: string;
  lastTopupAt?: number;
  lastWithdrawAt?: number;
  /** The OTP list's integer id. */
  number: number;
}

interface FakeTransaction {
  id: string;
  cardId: string;
  status: 'Approved' | 'Declined';
  side: 'Debit' | 'Credit';
  amount: number;
  type: string;
  merchant: string;
  declineCode: string | null;
  at: string;
}

interface FakeOtp {
  id: string;
  cardId: string;
  code: string;
  amount: number;
  at: string;
}

export interface FakeCardServiceOptions {
  /** Milliseconds since the epoch; `Date.now` by default. */
  now?: () => number;
}

const BINS = [
  { id: 'b5d1c0de-0000-4000-8000-000000000001', bin: '531993', network: 'master', threeDS: true, wallet: true, initial: 0 },
  { id: 'b5d1c0de-0000-4000-8000-000000000002', bin: '428837', network: 'visa', threeDS: false, wallet: false, initial: 500 },
];
const PLANS = [
  { id: 1, name: 'Basic', description: 'Up to $1,000', limit: 100_000, fee: 500 },
  { id: 2, name: 'Pro', description: 'Up to $10,000', limit: 1_000_000, fee: 2_000 },
];
const TOPUP_COOLDOWN_MS = 120_000;
const WITHDRAW_COOLDOWN_MS = 900_000;

const amount = (cents: number) => cents / 100;
const money = (cents: number) => (cents / 100).toFixed(2);
const fee = (card: FakeCard, cents: number) =>
  card.category === 'Wallet' ? Math.round(cents * 0.03) + 100 : Math.round(cents * 0.02) + 50;

export class FakeCardService {
  readonly users = new Map<string, FakeUser>();
  readonly cards = new Map<string, FakeCard>();
  readonly transactions: FakeTransaction[] = [];
  readonly otps: FakeOtp[] = [];
  /** Every request, in order: method, path (with query) and whether it carried an Idempotency-Key. */
  readonly requests: { method: string; path: string; idempotencyKey: boolean; at: number }[] = [];
  /** Set: every request waits this long before it is answered. */
  delayMs = 0;
  /** Set: every request is answered 503 (the service is down). */
  down = false;
  /** Unset: the service has no OTP-e-mail request (spec 4.14): its route answers 404 `Not Found`. */
  otpRequest = true;
  /** Set: requests that match hang until the socket is destroyed (a request lost after it was sent). */
  hang?: (method: string, path: string) => boolean;
  /** Set: every request is answered 401 until then (ms since the epoch), whatever its token: a service restarting, a proxy's hiccup. */
  unauthorizedUntil = 0;
  /** The next this many requests are answered 401, whatever their token. */
  unauthorizedNext = 0;
  /** Set: a request that matches is carried out at once, and its answer sent this many ms later (the watcher may read its outcome meanwhile). */
  answerDelay?: (method: string, path: string) => number;
  /** How a transaction's side is written in the list (the spec's `Debit`/`Credit` by default; some services write `debit`). */
  sideText: (side: 'Debit' | 'Credit') => string = (side) => side;
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private readonly now: () => number;
  private numbers = 0;

  constructor(options: FakeCardServiceOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  get url(): string {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error('the fake card service is not listening');
    return `http://127.0.0.1:${address.port}`;
  }

  async listen(): Promise<this> {
    this.server = createServer((request, response) => void this.serve(request, response));
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** A user with a wallet of `wallet` cents; returns their token. */
  addUser(shape: Shape, wallet = 100_000): string {
    const token = `fake-${randomUUID()}`;
    this.users.set(token, { id: randomUUID(), shape, wallet, walletUpdatedAt: this.iso() });
    return token;
  }

  /** The token stops working (401 from then on). */
  revoke(token: string): void {
    this.users.delete(token);
  }

  /** A card issued in `Processing` (earlier shape) becomes active at the provider. */
  activate(cardId: string): void {
    const card = this.cards.get(cardId);
    if (card?.status === 'Processing') card.status = 'active';
  }

  /** A 3-D Secure code arrives for the card. */
  addOtp(cardId: string, code = String(randomInt(100_000, 1_000_000)), cents = 1_299): FakeOtp {
    const otp = { id: randomUUID(), cardId, code, amount: cents, at: this.iso() };
    this.otps.push(otp);
    return otp;
  }

  /** A purchase on the card: approved when it is active and covered, else declined. */
  purchase(cardId: string, cents: number, merchant = 'Shop'): FakeTransaction {
    const card = this.cards.get(cardId)!;
    const approved = card.status === 'active' && card.balance >= cents;
    if (approved) card.balance -= cents;
    return this.record(card, {
      status: approved ? 'Approved' : 'Declined',
      side: 'Debit',
      amount: cents,
      type: 'purchase',
      merchant,
      declineCode: approved ? null : card.status === 'frozen' ? 'card_frozen' : 'insufficient_funds',
    });
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  private record(card: FakeCard, t: Omit<FakeTransaction, 'id' | 'cardId' | 'at'>): FakeTransaction {
    const transaction = { id: randomUUID(), cardId: card.id, at: this.iso(), ...t };
    this.transactions.push(transaction);
    return transaction;
  }

  private async serve(request: IncomingMessage, response: ServerResponse): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const method = request.method ?? 'GET';
    const path = request.url ?? '/';
    this.requests.push({ method, path, idempotencyKey: request.headers['idempotency-key'] !== undefined, at: this.now() });
    if (this.hang?.(method, path)) return;
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    const answerDelayMs = this.answerDelay?.(method, path) ?? 0;
    const send = (status: number, body: Record<string, unknown>): true => {
      const write = () => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      if (answerDelayMs > 0) setTimeout(write, answerDelayMs);
      else write();
      return true;
    };
    if (this.down) return send(503, { success: false, message: 'Service Unavailable' });
    if (this.unauthorizedNext > 0 || Date.now() < this.unauthorizedUntil) {
      if (this.unauthorizedNext > 0) this.unauthorizedNext--;
      return send(401, { success: false, message: 'Unauthorized' });
    }
    const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    const user = token === undefined ? undefined : this.users.get(token);
    if (!user) return send(401, { success: false, message: 'Unauthorized' });
    let body: Record<string, unknown> = {};
    try {
      if (chunks.length > 0) body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      return send(400, { success: false, message: 'Malformed JSON' });
    }
    const url = new URL(path, 'http://fake');
    const ok = (data: unknown, message = 'OK', timestamp = true) =>
      send(200, { success: true, data, message, ...(timestamp ? { timestamp: this.iso() } : {}) });
    const refuse = (message: string, status = 400) => send(status, { success: false, message, timestamp: this.iso() });
    const otpRefuse = (error: string, status = 403) => send(status, { success: false, error, timestamp: this.iso() });
    try {
      this.route(user, method, url, body, { ok, refuse, otpRefuse, send });
    } catch (error) {
      send(500, { success: false, message: `Internal error: ${(error as Error).message}` });
    }
  }

  private route(
    user: FakeUser,
    method: string,
    url: URL,
    body: Record<string, unknown>,
    reply: {
      ok: (data: unknown, message?: string, timestamp?: boolean) => true;
      refuse: (message: string, status?: number) => true;
      otpRefuse: (error: string, status?: number) => true;
      send: (status: number, body: Record<string, unknown>) => true;
    },
  ): true | undefined {
    const { ok, refuse, otpRefuse } = reply;
    const earlier = user.shape === 'earlier';
    const segments = url.pathname.split('/').filter(Boolean);
    const route = `${method} /${segments.map((s, i) => (i === 3 && segments[2] === 'cards' && s !== 'transactions' ? ':id' : s)).join('/')}`;
    const owned = () => {
      const card = this.cards.get(segments[3] ?? '');
      return card && card.userId === user.id ? card : undefined;
    };
    const notFound = () => refuse('Card not found or access denied', 403);
    const validAmount = (min: number, label: string): number | undefined => {
      const value = body.amount;
      if (typeof value !== 'number' || value < min || value > 10_000 || Math.round(value * 100) !== value * 100) {
        reply.send(400, {
          success: false,
          message: 'Invalid input data',
          error: [{ code: 'too_small', minimum: min, type: 'number', inclusive: true, exact: false, message: label, path: ['amount'] }],
          timestamp: this.iso(),
        });
        return undefined;
      }
      return Math.round(value * 100);
    };

    switch (route) {
      case 'GET /api/v1/health':
        return ok({ status: 'healthy', environment: 'fake', timestamp: this.iso() }, 'API is healthy', false);
      case 'GET /api/v1/bins':
        return ok(
          BINS.map((b) =>
            earlier
              ? {
                  id: b.id,
                  status: 'Active',
                  BIN: b.bin,
                  category: b.wallet ? 'Wallet' : 'Online',
                  currency: 'USD',
                  '3ds': b.threeDS,
                  digital_wallet: b.wallet,
                  address: '1 Main St, Dover, DE',
                }
              : {
                  id: b.id,
                  bin: b.bin,
                  network: b.network,
                  threeDS: b.threeDS,
                  wallet: b.wallet,
                  currency: 'USD',
                  country: 'US',
                  initial_balance: amount(b.initial),
                },
          ),
          'BINs',
          !earlier,
        );
      case 'GET /api/v1/card-plans':
        return ok(
          PLANS.map((p) => ({
            id: p.id,
            name: p.name,
            description: p.description,
            limit: amount(p.limit),
            creation_fee: amount(p.fee),
            created_at: '2026-01-01T00:00:00.000Z',
          })),
          'Plans',
          false,
        );
      case 'POST /api/v1/cards': {
        const bin = BINS.find((b) => b.id === body.bin_id);
        const plan = PLANS.find((p) => p.id === body.planId);
        if (typeof body.name !== 'string' || body.name.length === 0)
          return reply.send(400, {
            success: false,
            message: 'Invalid input data',
            error: [
              {
                code: 'too_small',
                minimum: 1,
                type: 'string',
                inclusive: true,
                exact: false,
                message: 'Card name is required',
                path: ['name'],
              },
            ],
          });
        if (!bin) return refuse('Invalid BIN ID or BIN is disabled');
        if (!plan) return refuse('Invalid input data');
        if (user.wallet < plan.fee) return refuse(`Insufficient balance. Required: ${money(plan.fee)}`);
        user.wallet -= plan.fee;
        user.walletUpdatedAt = this.iso();
        const pan = `${bin.bin}${String(randomInt(0, 1e9)).padStart(10, '0')}`;
        const card: FakeCard = {
          id: randomUUID(),
          userId: user.id,
          name: body.name,
          pan,
          cvv: String(randomInt(100, 1000)),
          exp: '12/29',
          balance: bin.initial,
          deposit: bin.initial,
          limit: plan.limit,
          category: bin.wallet ? 'Wallet' : 'Online',
          status: earlier ? 'Processing' : 'active',
          binId: bin.id,
          createdAt: this.iso(),
          updatedAt: this.iso(),
          number: ++this.numbers,
        };
        this.cards.set(card.id, card);
        if (bin.initial > 0)
          this.record(card, {
            status: 'Approved',
            side: 'Credit',
            amount: bin.initial,
            type: 'deposit',
            merchant: 'Initial',
            declineCode: null,
          });
        return ok(
          earlier
            ? { ...this.cardRecord(card, true), EXP: '**/**', address: '1 Main St, Dover, DE 19901, US' }
            : {
                id: card.id,
                category: card.category,
                status: 'active',
                balance: amount(card.balance),
                address: { city: 'Dover', line1: '1 Main St', line2: null, state: 'DE', country: 'US', postalCode: '19901' },
              },
          'Card created',
        );
      }
      case 'GET /api/v1/cards/transactions': {
        const cardId = url.searchParams.get('card_id');
        if (cardId !== null && (!this.cards.has(cardId) || this.cards.get(cardId)!.userId !== user.id))
          return refuse('Invalid card_id parameter');
        const page = Number(url.searchParams.get('page') ?? 1);
        const limit = Math.min(100, Number(url.searchParams.get('limit') ?? 20));
        const mine = this.transactions
          .filter((t) => this.cards.get(t.cardId)?.userId === user.id && (cardId === null || t.cardId === cardId))
          .reverse();
        const totalPages = Math.max(1, Math.ceil(mine.length / limit));
        return ok({
          data: mine.slice((page - 1) * limit, page * limit).map((t) => {
            const card = this.cards.get(t.cardId)!;
            return {
              id: t.id,
              card_id: t.cardId,
              card_name: card.name,
              status: t.status,
              side: this.sideText(t.side),
              amount: amount(t.amount),
              currency: 'USD',
              type: t.type,
              masked_pan: `${card.pan.slice(0, 6)}******${card.pan.slice(-4)}`,
              merchant_name: t.merchant,
              original_amount: amount(t.amount),
              original_currency: 'USD',
              decline_code: t.declineCode,
              transaction_created_at: t.at,
              transaction_updated_at: t.at,
            };
          }),
          pagination: { page, limit, total: mine.length, totalPages, hasNext: page < totalPages, hasPrev: page > 1 },
        });
      }
      case 'GET /api/v1/wallet/balance':
        return ok({ balance: amount(user.wallet), updated_at: user.walletUpdatedAt }, 'Wallet', false);
    }

    const card = owned();
    if (segments[2] === 'cards' && segments.length >= 4 && !card)
      return route.includes('/otps') ? otpRefuse('Card not found or access denied') : notFound();
    if (!card) return reply.send(404, { success: false, message: 'Not Found' });
    const ready = card.status !== 'Processing';
    const now = this.now();
    switch (route) {
      case 'GET /api/v1/cards/:id':
        return ok(this.cardRecord(card, earlier), 'Card', !earlier);
      case 'GET /api/v1/cards/:id/details':
        return ok({ id: card.id, PAN: card.pan, CVV: card.cvv, EXP: card.exp, masked_PAN: this.masked(card), name: card.name });
      case 'POST /api/v1/cards/:id/topup': {
        const cents = validAmount(5, 'Minimum top-up amount is 5');
        if (cents === undefined) return;
        if (card.lastTopupAt !== undefined && now - card.lastTopupAt < TOPUP_COOLDOWN_MS)
          return reply.send(200, {
            success: false,
            message: `Please wait ${Math.ceil((TOPUP_COOLDOWN_MS - (now - card.lastTopupAt)) / 1000)} seconds before topping up this card again`,
          });
        card.lastTopupAt = now;
        if (card.deposit + cents > card.limit)
          return refuse(
            `Topup would exceed card limit. Current deposit: ${money(card.deposit)}, Limit: ${money(card.limit)}, Available: ${money(card.limit - card.deposit)}`,
          );
        const f = fee(card, cents);
        if (user.wallet < cents + f)
          return refuse(
            `Insufficient wallet balance. Required: ${money(cents + f)} (topup: ${money(cents)} + platform fee: ${money(f)}), Available: ${money(user.wallet)}`,
          );
        user.wallet -= cents + f;
        user.walletUpdatedAt = this.iso();
        card.balance += cents;
        card.deposit += cents;
        const t = this.record(card, {
          status: 'Approved',
          side: 'Credit',
          amount: cents,
          type: 'topup',
          merchant: 'Top-up',
          declineCode: null,
        });
        return ok(
          earlier
            ? {
                card_id: card.id,
                transaction_id: t.id,
                new_balance: amount(card.balance),
                platform_fee: amount(f),
                total_charged: amount(cents + f),
              }
            : {
                card_id: card.id,
                transaction_id: t.id,
                invoice_id: this.transactions.length,
                wallet_balance: amount(user.wallet),
                total_charged: amount(cents + f),
                platform_fee_amount: amount(f),
                new_card_balance: amount(card.balance),
              },
          'Top-up successful',
        );
      }
      case 'POST /api/v1/cards/:id/withdraw': {
        const cents = validAmount(1, 'Minimum withdrawal amount is 1.00');
        if (cents === undefined) return;
        if (card.lastWithdrawAt !== undefined && now - card.lastWithdrawAt < WITHDRAW_COOLDOWN_MS)
          return reply.send(200, { success: false, message: 'Please wait 15 minutes between withdrawals' });
        card.lastWithdrawAt = now;
        if (!ready) return refuse('Card is not ready for withdrawals');
        if (cents > card.balance)
          return refuse(
            earlier
              ? `Insufficient card balance. Available: ${money(card.balance)}`
              : `Insufficient card balance. Available: ${money(card.balance)}, Requested: ${money(cents)}`,
          );
        card.balance -= cents;
        user.wallet += cents;
        user.walletUpdatedAt = this.iso();
        const t = this.record(card, {
          status: 'Approved',
          side: 'Debit',
          amount: cents,
          type: 'withdrawal',
          merchant: 'Withdrawal',
          declineCode: null,
        });
        return ok(
          earlier
            ? {
                card_id: card.id,
                transaction_id: t.id,
                new_balance: amount(card.balance),
                amount_withdrawn: amount(cents),
                wallet_balance: amount(user.wallet),
              }
            : {
                card_id: card.id,
                transaction_id: t.id,
                invoice_id: this.transactions.length,
                wallet_balance: amount(user.wallet),
                new_card_balance: amount(card.balance),
                amount_withdrawn: amount(cents),
              },
          'Withdrawal successful',
        );
      }
      case 'PATCH /api/v1/cards/:id/freeze':
        if (!ready) return refuse('Card is not ready for freeze operation');
        if (card.status === 'frozen') return refuse('Card is already frozen');
        if (card.status !== 'active') return refuse('Only active cards can be frozen');
        card.status = 'frozen';
        return ok({ card_id: card.id, status: 'frozen' }, 'Card frozen');
      case 'PATCH /api/v1/cards/:id/unfreeze':
        if (!ready) return refuse('Card is not ready for unfreeze operation');
        if (card.status !== 'frozen') return refuse('Only frozen cards can be unfrozen');
        card.status = 'active';
        return ok({ card_id: card.id, status: 'active' }, 'Card unfrozen');
      case 'PATCH /api/v1/cards/:id/close': {
        if (card.status === 'closed') return refuse('Card is already closed');
        if (!ready) return refuse('Card not ready for closure');
        if (card.lastWithdrawAt !== undefined && now - card.lastWithdrawAt < WITHDRAW_COOLDOWN_MS)
          return refuse('Please wait 15 minutes between withdrawals');
        card.lastWithdrawAt = now;
        const withdrawn = card.balance;
        const t =
          withdrawn > 0
            ? this.record(card, {
                status: 'Approved',
                side: 'Debit',
                amount: withdrawn,
                type: 'withdrawal',
                merchant: 'Card closed',
                declineCode: null,
              })
            : undefined;
        user.wallet += withdrawn;
        card.balance = 0;
        card.status = 'closed';
        return ok(
          {
            card_id: card.id,
            balance_withdrawn: amount(withdrawn),
            transaction_id: t?.id ?? null,
            invoice_id: t ? this.transactions.length : null,
            new_wallet_balance: amount(user.wallet),
          },
          'Card closed',
        );
      }
      case 'GET /api/v1/cards/:id/otps':
        return ok({
          otps: this.otps
            .filter((o) => o.cardId === card.id)
            .map((o) => ({
              id: o.id,
              code: o.code,
              amount: amount(o.amount),
              currency: 'USD',
              masked_pan: this.masked(card),
              card_name: card.name,
              created_at: o.at,
            })),
          cardInfo: { id: card.number, nickname: card.name },
        });
      case 'POST /api/v1/cards/:id/otps/request': {
        if (!this.otpRequest) return reply.send(404, { success: false, message: 'Not Found' });
        const latest = this.otps.filter((o) => o.cardId === card.id).at(-1);
        if (!latest) return otpRefuse('No OTP found for this card', 404);
        return ok({
          message: 'OTP retrieved',
          cardInfo: { id: card.id, providerCardId: `p_${card.number}`, name: card.name, otp_code: latest.code },
        });
      }
      default:
        return reply.send(404, { success: false, message: 'Not Found' });
    }
  }

  private masked(card: FakeCard): string {
    return `${card.pan.slice(0, 6)}******${card.pan.slice(-4)}`;
  }

  /** Spec 2.3: the current record, or the earlier one with card data and capitalised states. */
  private cardRecord(card: FakeCard, earlier: boolean): Record<string, unknown> {
    const base = {
      id: card.id,
      created_at: card.createdAt,
      updated_at: card.updatedAt,
      category: card.category,
      masked_PAN: this.masked(card),
      name: card.name,
      balance: amount(card.balance),
      deposit: amount(card.deposit),
      currency: 'USD',
      currency_short_name: 'USD',
      bin_id: card.binId,
      '3ds': true,
    };
    if (!earlier) return { ...base, status: card.status };
    return {
      ...base,
      status: card.status === 'Processing' ? 'Processing' : card.status[0]!.toUpperCase() + card.status.slice(1),
      PAN: card.pan,
      EXP: card.exp,
      CVV: card.cvv,
      withdraw: 0,
      spent: 0,
      auto_topup: { enabled: false, min_balance: 0, topup_amount: 0, last_triggered: null },
    };
  }
}
