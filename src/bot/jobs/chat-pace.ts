/**
 * How often the bot may push to one chat: a burst of `burst` messages, then one every `intervalMs`
 * (Telegram's own limit for a chat is about one message a second; past it, 429s and waits for everyone).
 * Counted in this process, in real time (not the service's clock, which tests move).
 */
export class ChatPace {
  readonly #buckets = new Map<number, { tokens: number; at: number }>();

  constructor(
    readonly burst = 3,
    readonly intervalMs = 1_000,
    readonly now: () => number = () => performance.now(),
  ) {}

  /** The messages `chatId` may be sent now (whole ones). */
  available(chatId: number): number {
    return Math.floor(this.#refilled(chatId).tokens);
  }

  /** Counts one message sent to `chatId`. */
  take(chatId: number): void {
    this.#refilled(chatId).tokens -= 1;
  }

  /** Milliseconds until `chatId` may be sent a message (0: now). */
  waitMs(chatId: number): number {
    const { tokens } = this.#refilled(chatId);
    return tokens >= 1 ? 0 : Math.ceil((1 - tokens) * this.intervalMs);
  }

  #refilled(chatId: number): { tokens: number; at: number } {
    const now = this.now();
    let bucket = this.#buckets.get(chatId);
    if (bucket === undefined) {
      bucket = { tokens: this.burst, at: now };
      this.#buckets.set(chatId, bucket);
    } else {
      bucket.tokens = Math.min(this.burst, bucket.tokens + (now - bucket.at) / this.intervalMs);
      bucket.at = now;
    }
    return bucket;
  }

  /** Forgets the chats whose burst is whole again (as good as never pushed to), so only recent ones are kept. */
  forgetRested(): void {
    for (const chatId of [...this.#buckets.keys()]) if (this.#refilled(chatId).tokens >= this.burst) this.#buckets.delete(chatId);
  }
}
