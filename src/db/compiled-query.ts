import { CompiledQuery, sql, type Compilable, type QueryResult } from 'kysely';
import { getOrCreate } from '../infra/get-or-create.js';
import { prepareOnPostgres } from './prepared-statements.js';
import type { Executor } from './schema.js';

/** Stands for the i-th argument while a query is compiled once. */
class Slot {
  constructor(readonly index: number) {}
}

interface Compiled<Args extends unknown[]> {
  sql: string;
  parameters(args: Args): unknown[];
}

/**
 * A query built and compiled once per dialect, then re-executed with new argument values. Building
 * and compiling a query in Kysely costs as much as running a short SQLite statement, or more
 * (measured: about 15 µs for a card read that runs in 13 µs; 120 µs for a top-up's statements, which
 * run in 150 µs). So the hot paths use this (the top-up's writes, the reads behind every request
 * and screen; `bench/core.bench.ts`, `bench/api.bench.ts`), and everything else plain Kysely. Only
 * for queries whose SQL does not depend on the values (no `is null` chosen by a value, no lists of
 * varying length); the arguments travel as bound parameters.
 *
 * @example
 * const byId = compiledOnce(1, (ex, id: string) => ex.selectFrom('cards').selectAll().where('id', '=', id));
 * const { rows } = await byId.execute(db, cardId);
 */
export function compiledOnce<Args extends unknown[], Row>(
  arity: Args['length'],
  build: (ex: Executor, ...args: Args) => Compilable<Row>,
): CompiledOnce<Args, Row> {
  const byDialect = new Map<string, Compiled<Args>>();
  const execute = async (ex: Executor, ...args: Args): Promise<QueryResult<Row>> => {
    const compiled = getOrCreate(byDialect, dialectOf(ex), () => compileWithSlots(ex, arity, build));
    const rows = directReads.get(ex.getExecutor())?.(compiled.sql, compiled.parameters(args));
    if (rows) return { rows: rows as Row[] };
    return ex.executeQuery(CompiledQuery.raw(compiled.sql, compiled.parameters(args)) as CompiledQuery<Row>);
  };
  return {
    execute,
    async executeTakeOne(ex, ...args) {
      const [row] = (await execute(ex, ...args)).rows;
      if (row === undefined) throw new Error(`No row from ${byDialect.get(dialectOf(ex))?.sql.slice(0, 60)}`);
      return row;
    },
  };
}

export interface CompiledOnce<Args extends unknown[], Row> {
  execute(ex: Executor, ...args: Args): Promise<QueryResult<Row>>;
  /** The one row a statement always returns (a `select` over CTEs); throws if it returned none. */
  executeTakeOne(ex: Executor, ...args: Args): Promise<Row>;
}

/** Database handles (by their executor, never a transaction's) whose reads may skip Kysely's executor: `readsDirectly`. */
const directReads = new WeakMap<object, (sql: string, parameters: readonly unknown[]) => unknown[] | undefined>();

/**
 * Lets `compiledOnce` run the reads of `db` (outside any transaction: a transaction has an executor of its
 * own) through `read`, a dialect's way of reading at once (`SqliteDialect.readNow`), which returns
 * `undefined` for what it does not take.
 */
export function readsDirectly(db: Executor, read: (sql: string, parameters: readonly unknown[]) => unknown[] | undefined): void {
  directReads.set(db.getExecutor(), read);
}

const PROBE = sql`${sql.id('probe')} ${0}`;
// A transaction is a new handle each time, its dialect is not: each handle remembers its own.
const dialects = new WeakMap<Executor, string>();

/** What sets a dialect's SQL apart (identifier quotes, placeholders), learnt through Kysely's public `compile`. */
function dialectOf(ex: Executor): string {
  return getOrCreate(dialects, ex, () => PROBE.compile(ex).sql);
}

function compileWithSlots<Args extends unknown[], Row>(
  ex: Executor,
  arity: number,
  build: (ex: Executor, ...args: Args) => Compilable<Row>,
): Compiled<Args> {
  const slots = Array.from({ length: arity }, (_, i) => new Slot(i)) as unknown as Args;
  const query = build(ex, ...slots).compile();
  const constants = query.parameters;
  const sources = constants.map((p) => (p instanceof Slot ? p.index : -1));
  if (new Set(sources.filter((s) => s >= 0)).size !== arity) {
    throw new Error(`compiledOnce: ${query.sql} does not bind each of its ${arity} arguments`);
  }
  // Fixed text: Postgres connections send it as a named statement, parsed and planned once per connection.
  prepareOnPostgres(query.sql);
  return { sql: query.sql, parameters: (values) => sources.map((s, i) => (s >= 0 ? values[s] : constants[i])) };
}
