import { createHash, randomBytes } from 'node:crypto';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import pg from 'pg';

/**
 * Postgres's connections, shared by the processes on one database: `DATABASE_POOL_SIZE` is what they keep
 * open together, and each process uses its share.
 *
 * Why: with a pool of its own per process, four API processes kept four times the transactions going at
 * once, and Postgres spent more CPU on each top-up (0.60 ms with 10 connections, 0.70-0.75 with 20 or 40 on
 * a 2-core host), so more processes did fewer top-ups than one. Sharing 10, two processes did 1.12x one on
 * average and four 0.99x, against 1.06x and 0.95x with 10 each (docs/performance.md).
 *
 * How: each process names its connections (`application_name`, see `naming`) and counts, every two seconds,
 * the names of its database's connections with its prefix and tag: the processes at work on it. Its share is the total over that count, rounded up, at least two (so that
 * one slow statement does not hold up all of a process's requests), and never above the total.
 * Connections above a share that shrank are not handed out again and close after 10 s idle, as pg's pool
 * closes any. So the total is approximate: a process starts with all of it until the others' next count,
 * and with more processes than half the total, their minimums of two add up to more.
 */
export const APPLICATION_NAME = 'virtual-cards';
export const COUNT_EVERY_MS = 2_000;
/**
 * The count of the processes at work on the database and schema (`$1`: the names' pattern). Only connections
 * used in the last 10 s count: a live process counts every 2 s, while the connections of a host that vanished
 * without closing them stay listed until TCP gives up on them (two hours by default).
 */
export const COUNT_STATEMENT =
  "select count(distinct application_name)::int as n from pg_stat_activity where datname = current_database() and application_name like $1 and state_change > now() - interval '10 seconds'";

/** This process's connections when `processes` share `total`. */
export function shareOf(total: number, processes: number): number {
  return Math.min(total, Math.max(2, Math.ceil(total / Math.max(1, processes))));
}

/**
 * How a URL's connections are named and counted: the name the URL gives them (`application_name`), else ours,
 * then a tag of the session settings the URL sets (its `options`, such as `-c search_path=…`: processes on
 * one database in different schemas, tests or side-by-side deployments, do not share), then a random id of
 * the process's own. The URL's
 * name is taken out of the URL, where it would win over the process's.
 */
function naming(url: string): { url: string; name: string; pattern: string } {
  let options = '';
  let prefix = APPLICATION_NAME;
  try {
    const parsed = new URL(url);
    options = parsed.searchParams.get('options') ?? '';
    const given = parsed.searchParams.get('application_name');
    if (given) {
      // Postgres keeps a name's printable ASCII only (15 shows `?` for any other byte, 16 an escape), and 63
      // bytes of it: the prefix is made so, leaving room for the tag and the id, or the pattern would not
      // find the process's own name.
      prefix = given.replace(/[^\x20-\x7e]/g, '?').slice(0, 40);
      parsed.searchParams.delete('application_name');
      url = parsed.toString();
    }
  } catch {
    // pg reads the URL itself and reports what is wrong with it.
  }
  const tag = createHash('sha256').update(options).digest('hex').slice(0, 8);
  const like = `${prefix} ${tag} `.replace(/[\\%_]/g, (c) => `\\${c}`);
  return { url, name: `${prefix} ${tag} ${randomBytes(4).toString('hex')}`, pattern: `${like}%` };
}

/** A pg pool that hands out at most this process's share of the connections (see above). */
export class SharedPool implements PostgresPool {
  /** What this process's connections are named in `pg_stat_activity`. */
  readonly applicationName: string;
  readonly #pool: pg.Pool;
  readonly #total: number;
  readonly #namePattern: string;
  #active = 0;
  /** Callers waiting for a connection; each is resolved with a slot already counted in `#active`. */
  readonly #waiting: (() => void)[] = [];
  readonly #timer: NodeJS.Timeout;
  #processes = 1;
  #ended: Promise<void> | undefined;
  #counting: Promise<void> | undefined;

  constructor(options: { url: string; total: number; Client: typeof pg.Client }) {
    const { url, name, pattern } = naming(options.url);
    this.#total = options.total;
    this.#namePattern = pattern;
    this.applicationName = name;
    this.#pool = new pg.Pool({
      connectionString: url,
      max: options.total,
      Client: options.Client,
      application_name: this.applicationName,
      // The count uses a connection every 2 s, which keeps it from closing when idle: it must not keep the
      // process alive, as an idle pg pool does not once its connections have closed.
      allowExitOnIdle: true,
    });
    void this.count();
    this.#timer = setInterval(() => void this.count(), COUNT_EVERY_MS).unref();
  }

  /** The processes sharing the connections at the last count (this one included), and this one's share. */
  get sharing(): { processes: number; share: number } {
    return { processes: this.#processes, share: this.#limit };
  }

  /** This process's share at the last count (all of the total until the first). */
  get #limit(): number {
    return shareOf(this.#total, this.#processes);
  }

  /**
   * Counts the processes at work on this database and schema, and takes this one's share. One count at a
   * time: under load a count waits for a connection like any caller, and the next tick finds it still going.
   */
  count(): Promise<void> {
    this.#counting ??= this.#countOnce().finally(() => {
      this.#counting = undefined;
    });
    return this.#counting;
  }

  async #countOnce(): Promise<void> {
    let client: PostgresPoolClient | undefined;
    try {
      client = await this.connect();
      const { rows } = await client.query<{ n: number }>(COUNT_STATEMENT, [this.#namePattern]);
      this.#counted(Math.max(1, rows[0]?.n ?? 1));
    } catch {
      // Postgres unreachable: the share stays as it was, and the callers see the error on their own queries.
    } finally {
      client?.release();
    }
  }

  async connect(): Promise<PostgresPoolClient> {
    if (this.#active < this.#limit) this.#active++;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      this.#free();
      throw error;
    }
    const release = client.release;
    client.release = (error?: Error | boolean) => {
      release.call(client, error);
      this.#free();
    };
    return client;
  }

  /** Closes the connections (once, however often it is called). */
  end(): Promise<void> {
    clearInterval(this.#timer);
    this.#ended ??= this.#pool.end();
    return this.#ended;
  }

  /** A connection given back: its slot goes to the next waiting caller, unless the share shrank below it. */
  #free(): void {
    const next = this.#active <= this.#limit ? this.#waiting.shift() : undefined;
    if (next) next();
    else this.#active--;
  }

  /** A new count: callers waiting get the slots a grown share gives. */
  #counted(processes: number): void {
    this.#processes = processes;
    while (this.#active < this.#limit && this.#waiting.length > 0) {
      this.#active++;
      this.#waiting.shift()!();
    }
  }
}
