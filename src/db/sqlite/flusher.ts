/**
 * Durability after the fact, for a writer that commits without flushing: one flush at a time, each
 * covering every commit made before it began (a later commit waits for the next one). Once a flush
 * has failed, nothing is durable any more and every wait fails: the process must stop and restart, as
 * Postgres does after a failed fsync.
 */
export class Flusher {
  #made = 0;
  #durable = 0;
  #running = false;
  #failed: { error: unknown } | undefined;
  readonly #waiting: { upTo: number; resolve: () => void; reject: (error: unknown) => void }[] = [];

  constructor(
    private readonly flush: () => Promise<void>,
    private readonly onFailure: (error: unknown) => void = () => undefined,
  ) {}

  /** Whether some commit is not yet durable. */
  get pending(): boolean {
    return this.#made > this.#durable;
  }

  /** Counts a commit just made; resolves once it is durable. */
  committed(): Promise<void> {
    return this.#until(++this.#made);
  }

  /** Resolves once every commit made so far is durable. */
  settled(): Promise<void> {
    return this.#until(this.#made);
  }

  /** Throws the failure of an earlier flush: nothing more may be committed. */
  check(): void {
    if (this.#failed) throw this.#failed.error;
  }

  #until(upTo: number): Promise<void> {
    if (this.#failed) return Promise.reject(this.#failed.error);
    if (upTo <= this.#durable) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => this.#waiting.push({ upTo, resolve, reject }));
    this.#run();
    return done;
  }

  #run(): void {
    if (this.#running) return;
    this.#running = true;
    const upTo = this.#made;
    this.flush().then(
      () => {
        this.#running = false;
        this.#durable = upTo;
        const waiting = this.#waiting.splice(0);
        for (const waiter of waiting) {
          if (waiter.upTo <= upTo) waiter.resolve();
          else this.#waiting.push(waiter);
        }
        if (this.#waiting.length > 0) this.#run();
      },
      (error: unknown) => {
        this.#running = false;
        this.#failed = { error };
        for (const waiter of this.#waiting.splice(0)) waiter.reject(error);
        this.onFailure(error);
      },
    );
  }
}
