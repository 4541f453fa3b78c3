import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local Bot API server on 127.0.0.1 for end-to-end tests: the bot polls it with getUpdates like
 * Telegram, every call is recorded, and scripted users send text and press inline buttons.
 */

export interface RecordedCall {
  index: number;
  /** When the call arrived (Date.now()). */
  at: number;
  method: string;
  token: string;
  payload: Record<string, any>;
  ok: boolean;
  result?: unknown;
  error?: string;
}

export interface StoredMessage {
  chatId: number;
  messageId: number;
  fromBot: boolean;
  text: string;
  entities?: { type: string; offset: number; length: number }[];
  replyMarkup?: { inline_keyboard: { text: string; callback_data?: string }[][] };
  protectContent: boolean;
  deleted: boolean;
  /** When the message was stored (Date.now()). */
  sentAt?: number;
  /** An invoice the bot sent (sendInvoice): what a user's client would pay. */
  invoice?: SentInvoice;
}

export interface SentInvoice {
  title: string;
  description: string;
  payload: string;
  currency: string;
  totalAmount: number;
  providerToken?: string;
}

/** How the test server refuses a call (`BotApiServer.refuse`). */
export interface Refusal {
  code: number;
  description: string;
  /** A flood wait's seconds, for a 429. */
  retryAfter?: number;
}

const BOT_USER = {
  id: 777000,
  is_bot: true,
  first_name: 'Cards',
  username: 'cards_test_bot',
  can_join_groups: true,
  can_read_all_group_messages: false,
  supports_inline_queries: false,
};

class ApiRefusal extends Error {
  constructor(
    readonly code: number,
    description: string,
    /** A flood wait's seconds (429), sent as `parameters.retry_after`. */
    readonly retryAfter?: number,
  ) {
    super(description);
  }
}

export class BotApiServer {
  readonly calls: RecordedCall[] = [];
  /** The parameters of the latest getUpdates (not recorded in `calls`: polling never stops). */
  lastPoll?: Record<string, any>;
  #server?: Server;
  #updates: { update_id: number; [k: string]: unknown }[] = [];
  #nextUpdateId = 1;
  #pollers = new Set<() => void>();
  #callWaiters = new Set<() => void>();
  #messages = new Map<string, StoredMessage>();
  #nextMessageId = new Map<number, number>();
  #answered = new Set<string>();
  /** Pre-checkout queries answered, by id: each may be answered once. */
  readonly checkoutAnswers = new Map<string, { ok: boolean; errorMessage?: string }>();
  #nextCheckoutId = 1;
  #nextQueryId = 1;
  #date = 1_700_000_000;
  #delays = new Map<string, number>();
  #refusal?: (method: string, payload: Record<string, any>) => Refusal | undefined;

  /** Starts listening; returns the api root to give the bot (`apiRoot`). */
  async start(): Promise<string> {
    this.#server = createServer((req, res) => void this.#handle(req, res));
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    for (const wake of this.#pollers) wake();
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()) ?? resolve());
  }

  /** Answers `method` only after `ms`, like a Telegram that is slow or not reachable yet. */
  delay(method: string, ms: number): void {
    this.#delays.set(method, ms);
  }

  /**
   * Refuses the calls `rule` picks, as Telegram would (e.g. a deleteMessage in a group where the bot is no
   * admin, a flood wait with its `retryAfter`); `undefined` serves every call again.
   */
  refuse(rule?: (method: string, payload: Record<string, any>) => Refusal | undefined): void {
    this.#refusal = rule;
  }

  /** A position in the call log: waits look only at calls recorded after it. */
  mark(): number {
    return this.calls.length;
  }

  user(id: number, options: { languageCode?: string; firstName?: string } = {}): ScriptedUser {
    return new ScriptedUser(this, id, options.languageCode ?? 'en', options.firstName ?? 'Alice');
  }

  message(chatId: number, messageId: number): StoredMessage | undefined {
    return this.#messages.get(`${chatId}:${messageId}`);
  }

  /** The bot's messages in `chatId` not deleted: what the chat shows of the bot, to see it grow or not. */
  botMessages(chatId: number): StoredMessage[] {
    return [...this.#messages.values()].filter((m) => m.chatId === chatId && m.fromBot && !m.deleted);
  }

  /** Resolves with the first recorded call after `mark` matching `predicate`; rejects after `timeoutMs`. */
  async waitForCall(
    predicate: (call: RecordedCall) => boolean,
    mark = 0,
    timeoutMs = 15_000,
    what = 'a matching call',
  ): Promise<RecordedCall> {
    const deadline = Date.now() + timeoutMs;
    let scanned = mark;
    for (;;) {
      for (; scanned < this.calls.length; scanned++) if (predicate(this.calls[scanned]!)) return this.calls[scanned]!;
      const left = deadline - Date.now();
      if (left <= 0) {
        const seen = this.calls
          .slice(mark)
          .map((c) => `${c.method}${c.payload.text ? ` "${String(c.payload.text).slice(0, 60)}"` : ''}${c.ok ? '' : ` ERROR ${c.error}`}`);
        throw new Error(`Timed out waiting for ${what}; calls since mark:\n  ${seen.join('\n  ')}`);
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.#callWaiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, left);
        this.#callWaiters.add(wake);
      });
    }
  }

  /** The next message the bot sends to `chatId` after `mark` (optionally whose text matches). */
  async nextMessage(chatId: number, mark: number, text?: RegExp | string): Promise<StoredMessage> {
    const call = await this.waitForCall(
      (c) => c.ok && c.method === 'sendMessage' && Number(c.payload.chat_id) === chatId && matches(String(c.payload.text), text),
      mark,
      15_000,
      `sendMessage to ${chatId}${text ? ` matching ${String(text)}` : ''}`,
    );
    const sent = call.result as { message_id: number };
    return this.message(chatId, sent.message_id)!;
  }

  /** The next edit of a message's text in `chatId` after `mark`. */
  async nextEdit(chatId: number, mark: number, text?: RegExp | string): Promise<StoredMessage> {
    const call = await this.waitForCall(
      (c) => c.ok && c.method === 'editMessageText' && Number(c.payload.chat_id) === chatId && matches(String(c.payload.text), text),
      mark,
      15_000,
      `editMessageText in ${chatId}${text ? ` matching ${String(text)}` : ''}`,
    );
    return this.message(chatId, Number(call.payload.message_id))!;
  }

  pushUpdate(update: Record<string, unknown>): void {
    this.#updates.push({ update_id: this.#nextUpdateId++, ...update });
    for (const wake of this.#pollers) wake();
  }

  /**
   * Webhook mode: the updates queued since the last call, removed from the queue, for the test to post to
   * the bot's webhook as Telegram would (a bot with a webhook never polls).
   */
  takeUpdates(): { update_id: number; [k: string]: unknown }[] {
    return this.#updates.splice(0);
  }

  /** How many updates wait in the queue. */
  pendingUpdates(): number {
    return this.#updates.length;
  }

  storeUserMessage(chatId: number, text: string): StoredMessage {
    return this.#store({ chatId, messageId: this.#newMessageId(chatId), fromBot: false, text, protectContent: false, deleted: false });
  }

  /** A pre-checkout query's id (apart from the callback queries', which must all be answered). */
  newCheckoutId(): string {
    return `checkout-${this.#nextCheckoutId++}`;
  }

  newQueryId(): string {
    return String(this.#nextQueryId++);
  }

  /** Callback queries the scripted users sent that the bot never answered (each must be answered once). */
  unansweredQueries(): string[] {
    return Array.from({ length: this.#nextQueryId - 1 }, (_, i) => String(i + 1)).filter((id) => !this.#answered.has(id));
  }

  now(): number {
    return ++this.#date;
  }

  #newMessageId(chatId: number): number {
    const id = (this.#nextMessageId.get(chatId) ?? 0) + 1;
    this.#nextMessageId.set(chatId, id);
    return id;
  }

  #store(message: StoredMessage): StoredMessage {
    message.sentAt ??= Date.now();
    this.#messages.set(`${message.chatId}:${message.messageId}`, message);
    return message;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(url.pathname);
    if (!match) {
      res.writeHead(404).end(JSON.stringify({ ok: false, error_code: 404, description: 'Not Found' }));
      return;
    }
    const [, token, method] = match as unknown as [string, string, string];
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const payload: Record<string, any> = raw ? JSON.parse(raw) : Object.fromEntries(url.searchParams);
    const send = (status: number, body: unknown) => {
      if (!res.writableEnded && !res.destroyed) res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (method === 'getUpdates') {
      this.lastPoll = payload;
      const updates = await this.#getUpdates(payload, req);
      send(200, { ok: true, result: updates });
      return;
    }
    const delay = this.#delays.get(method);
    if (delay !== undefined) await new Promise((resolve) => setTimeout(resolve, delay));
    const call: RecordedCall = { index: this.calls.length, at: Date.now(), method, token, payload, ok: true };
    try {
      const refusal = this.#refusal?.(method, payload);
      if (refusal) throw new ApiRefusal(refusal.code, refusal.description, refusal.retryAfter);
      call.result = this.#call(method, payload);
      send(200, { ok: true, result: call.result });
    } catch (error) {
      const refusal = error instanceof ApiRefusal ? error : new ApiRefusal(500, String(error));
      call.ok = false;
      call.error = refusal.message;
      const parameters = refusal.retryAfter === undefined ? {} : { parameters: { retry_after: refusal.retryAfter } };
      send(refusal.code, { ok: false, error_code: refusal.code, description: refusal.message, ...parameters });
    }
    this.calls.push(call);
    for (const wake of [...this.#callWaiters]) wake();
  }

  async #getUpdates(payload: Record<string, any>, req: IncomingMessage) {
    const offset = Number(payload.offset ?? 0);
    if (offset > 0) this.#updates = this.#updates.filter((u) => u.update_id >= offset);
    const timeout = Math.min(Number(payload.timeout ?? 0), 30);
    if (this.#updates.length === 0 && timeout > 0) {
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.#pollers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, timeout * 1000);
        this.#pollers.add(wake);
        req.once('close', wake);
      });
    }
    return this.#updates.slice(0, Number(payload.limit ?? 100));
  }

  #botMessage(chatId: number, payload: Record<string, any>): StoredMessage {
    return this.#store({
      chatId,
      messageId: this.#newMessageId(chatId),
      fromBot: true,
      text: String(payload.text),
      entities: payload.entities,
      replyMarkup: payload.reply_markup,
      protectContent: payload.protect_content === true,
      deleted: false,
    });
  }

  #existing(payload: Record<string, any>): StoredMessage {
    const message = this.message(Number(payload.chat_id), Number(payload.message_id));
    if (!message || message.deleted) throw new ApiRefusal(400, 'Bad Request: message to edit not found');
    return message;
  }

  #asTelegram(m: StoredMessage) {
    return {
      message_id: m.messageId,
      date: this.now(),
      chat: { id: m.chatId, type: m.chatId > 0 ? 'private' : 'group', first_name: 'Alice' },
      from: m.fromBot ? BOT_USER : { id: m.chatId, is_bot: false, first_name: 'Alice' },
      text: m.text,
      ...(m.entities ? { entities: m.entities } : {}),
      ...(m.replyMarkup ? { reply_markup: m.replyMarkup } : {}),
      ...(m.protectContent ? { has_protected_content: true } : {}),
    };
  }

  #call(method: string, payload: Record<string, any>): unknown {
    switch (method) {
      case 'getMe':
        return BOT_USER;
      case 'deleteWebhook':
      case 'setWebhook':
      case 'setMyCommands':
      case 'sendChatAction':
        return true;
      case 'sendMessage':
        if (!payload.text) throw new ApiRefusal(400, 'Bad Request: message text is empty');
        return this.#asTelegram(this.#botMessage(Number(payload.chat_id), payload));
      case 'editMessageText': {
        const message = this.#existing(payload);
        if (message.text === payload.text && JSON.stringify(message.replyMarkup ?? null) === JSON.stringify(payload.reply_markup ?? null)) {
          throw new ApiRefusal(400, 'Bad Request: message is not modified');
        }
        message.text = String(payload.text);
        message.entities = payload.entities;
        message.replyMarkup = payload.reply_markup;
        return this.#asTelegram(message);
      }
      case 'editMessageReplyMarkup': {
        const message = this.#existing(payload);
        message.replyMarkup = payload.reply_markup;
        return this.#asTelegram(message);
      }
      case 'deleteMessage': {
        const message = this.message(Number(payload.chat_id), Number(payload.message_id));
        if (!message || message.deleted) throw new ApiRefusal(400, 'Bad Request: message to delete not found');
        message.deleted = true;
        return true;
      }
      case 'sendInvoice': {
        const prices = payload.prices as { label: string; amount: number }[];
        const invoice: SentInvoice = {
          title: String(payload.title),
          description: String(payload.description),
          payload: String(payload.payload),
          currency: String(payload.currency),
          totalAmount: prices.reduce((sum, p) => sum + p.amount, 0),
          providerToken: payload.provider_token,
        };
        const message = this.#botMessage(Number(payload.chat_id), { text: invoice.title, reply_markup: payload.reply_markup });
        message.invoice = invoice;
        return {
          ...this.#asTelegram(message),
          text: undefined,
          invoice: {
            title: invoice.title,
            description: invoice.description,
            start_parameter: '',
            currency: invoice.currency,
            total_amount: invoice.totalAmount,
          },
        };
      }
      case 'answerPreCheckoutQuery': {
        const id = String(payload.pre_checkout_query_id);
        if (this.checkoutAnswers.has(id))
          throw new ApiRefusal(400, 'Bad Request: query is too old and response timeout expired or query ID is invalid');
        if (payload.ok !== true && !payload.error_message) throw new ApiRefusal(400, 'Bad Request: error_message is required');
        this.checkoutAnswers.set(id, {
          ok: payload.ok === true,
          ...(payload.error_message ? { errorMessage: String(payload.error_message) } : {}),
        });
        return true;
      }
      case 'answerCallbackQuery': {
        const id = String(payload.callback_query_id);
        if (this.#answered.has(id))
          throw new ApiRefusal(400, 'Bad Request: query is too old and response timeout expired or query ID is invalid');
        this.#answered.add(id);
        return true;
      }
      default:
        throw new ApiRefusal(404, `Not Found: method ${method} is not served by the test server`);
    }
  }
}

function matches(text: string, pattern?: RegExp | string): boolean {
  if (pattern === undefined) return true;
  return typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text);
}

/** A Telegram user in a private chat (or a group, with a negative chat id). */
export class ScriptedUser {
  constructor(
    readonly server: BotApiServer,
    readonly id: number,
    readonly languageCode: string,
    readonly firstName: string,
    readonly chatId: number = id,
  ) {}

  inGroup(groupId: number): ScriptedUser {
    return new ScriptedUser(this.server, this.id, this.languageCode, this.firstName, groupId);
  }

  #from() {
    return { id: this.id, is_bot: false, first_name: this.firstName, language_code: this.languageCode };
  }

  #chat() {
    return this.chatId > 0
      ? { id: this.chatId, type: 'private', first_name: this.firstName }
      : { id: this.chatId, type: 'group', title: 'Group' };
  }

  /** Sends text (a command when it starts with `/`); returns the call-log mark taken before. */
  send(text: string): { mark: number; message: StoredMessage } {
    const command = /^\/\w+/.exec(text);
    return this.#sendMessage(text, {
      text,
      ...(command ? { entities: [{ type: 'bot_command', offset: 0, length: command[0].length }] } : {}),
    });
  }

  /** Sends a photo with `caption`. */
  sendPhoto(caption: string): { mark: number; message: StoredMessage } {
    return this.#sendMessage(caption, { caption, photo: [{ file_id: 'photo', file_unique_id: 'photo', width: 90, height: 90 }] });
  }

  /** Forwards into this chat a message another user wrote. */
  forward(text: string): { mark: number; message: StoredMessage } {
    return this.#sendMessage(text, {
      text,
      forward_origin: { type: 'user', date: this.server.now(), sender_user: { id: 4242, is_bot: false, first_name: 'Bob' } },
    });
  }

  /** Edits a message this user sent earlier so that it reads `text`. */
  edit(message: StoredMessage, text: string): { mark: number; message: StoredMessage } {
    const mark = this.server.mark();
    message.text = text;
    this.server.pushUpdate({
      edited_message: {
        message_id: message.messageId,
        date: this.server.now(),
        edit_date: this.server.now(),
        chat: this.#chat(),
        from: this.#from(),
        text,
      },
    });
    return { mark, message };
  }

  #sendMessage(stored: string, fields: Record<string, unknown>): { mark: number; message: StoredMessage } {
    const mark = this.server.mark();
    const message = this.server.storeUserMessage(this.chatId, stored);
    this.server.pushUpdate({
      message: { message_id: message.messageId, date: this.server.now(), chat: this.#chat(), from: this.#from(), ...fields },
    });
    return { mark, message };
  }

  /** Sends text as a reply to `to` (a message of the bot's, such as a prompt asking for a reply). */
  reply(to: StoredMessage, text: string): { mark: number; message: StoredMessage } {
    return this.#sendMessage(text, {
      text,
      reply_to_message: { message_id: to.messageId, date: this.server.now(), chat: this.#chat(), from: BOT_USER, text: to.text },
    });
  }

  /**
   * Opens the checkout of an invoice the bot sent, as Telegram does before taking the money: a
   * `pre_checkout_query` with the invoice's amount, currency and payload (or others, as a tampered or stale
   * invoice would carry). Returns the query's id, to find the bot's answer in `server.checkoutAnswers`.
   */
  checkout(
    invoice: StoredMessage,
    override: { totalAmount?: number; currency?: string; payload?: string } = {},
  ): { mark: number; queryId: string } {
    const sent = invoice.invoice!;
    const mark = this.server.mark();
    const queryId = this.server.newCheckoutId();
    this.server.pushUpdate({
      pre_checkout_query: {
        id: queryId,
        from: this.#from(),
        currency: override.currency ?? sent.currency,
        total_amount: override.totalAmount ?? sent.totalAmount,
        invoice_payload: override.payload ?? sent.payload,
      },
    });
    return { mark, queryId };
  }

  /** The service message Telegram sends once the payment went through (sent again to replay a repeated update). */
  paid(invoice: StoredMessage, telegramChargeId: string): { mark: number; message: StoredMessage } {
    const sent = invoice.invoice!;
    return this.#sendMessage('', {
      successful_payment: {
        currency: sent.currency,
        total_amount: sent.totalAmount,
        invoice_payload: sent.payload,
        telegram_payment_charge_id: telegramChargeId,
        provider_payment_charge_id: `provider-${telegramChargeId}`,
      },
    });
  }

  /** Presses the inline button whose label contains `label` under the bot's message; returns the mark. */
  press(message: StoredMessage, label: string | RegExp): { mark: number; queryId: string; data: string } {
    const current = this.server.message(message.chatId, message.messageId) ?? message;
    const buttons = current.replyMarkup?.inline_keyboard.flat() ?? [];
    const button = buttons.find((b) => (typeof label === 'string' ? b.text.includes(label) : label.test(b.text)));
    if (!button?.callback_data) {
      throw new Error(`No button ${String(label)} under message ${message.messageId}: ${buttons.map((b) => b.text).join(', ')}`);
    }
    return { ...this.pressData(current, button.callback_data), data: button.callback_data };
  }

  /** Sends a callback query with arbitrary data, as a tampered client could. */
  pressData(message: StoredMessage, data: string): { mark: number; queryId: string } {
    const mark = this.server.mark();
    const queryId = this.server.newQueryId();
    this.server.pushUpdate({
      callback_query: {
        id: queryId,
        from: this.#from(),
        chat_instance: String(this.chatId),
        data,
        message: {
          message_id: message.messageId,
          date: this.server.now(),
          chat: this.#chat(),
          from: BOT_USER,
          text: message.text,
          ...(message.replyMarkup ? { reply_markup: message.replyMarkup } : {}),
        },
      },
    });
    return { mark, queryId };
  }
}
