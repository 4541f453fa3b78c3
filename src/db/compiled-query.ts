import { CompiledQuery, type Compilable, type Kysely, type QueryResult } from 'kysely';
import type { Database, Executor } from './schema.js';

/** Runs a read at once and returns its rows, or `undefined` when it has to wait its turn. */
export type ImmediateReader = (sql: string, parameters: readonly unknown[]) => unknown[] | undefined;

const immediateReaders = new WeakMap<object, ImmediateReader>();

/**
 * Lets `compiledOnce` reads on `db` (and on every `withTables` view of it, which share its executor)
 * skip Kysely's connection queue when `read` says they may: on SQLite, whenever no transaction is
 * open on the one connection, a read run synchronously sees exactly what a queued one would.
 * Reads inside a transaction use the transaction's own executor and never take this path.
 */
export function allowImmediateReads(db: Kysely<Database>, read: ImmediateReader): void {
  immediateReaders.set(db.getExecutor(), read);
}

/** Stands for the i-th argument while a query is compiled once. */
class Slot {
  constructor(readonly index: number) {}
}

/**
 * A query built and compiled once per dialect, then re-executed with new argument values through
 * `executeQuery`: hot paths skip Kysely's building and compiling, and the SQLite statement cache
 * skips preparing. A select on a database that allows immediate reads (`allowImmediateReads`) runs
 * at once when it may. Only for queries whose SQL does not depend on the values (no `is null` chosen
 * by a value, no lists of varying length); the arguments travel as bound parameters.
 *
 * @example
 * const byId = compiledOnce(1, (ex, id: string) => ex.selectFrom('cards').selectAll().where('id', '=', id));
 * const { rows } = await byId.execute(db, cardId);
 */
export function compiledOnce<Args extends unknown[], Row>(
  arity: Args['length'],
  build: (ex: Executor, ...args: Args) => Compilable<Row>,
): { execute(ex: Executor, ...args: Args): Promise<QueryResult<Row>> } {
  const compiledFor = new WeakMap<object, { sql: string; parameters: (args: Args) => unknown[]; select: boolean }>();
  return {
    async execute(ex, ...args) {
      const executor = ex.getExecutor();
      const adapter = executor.adapter;
      let compiled = compiledFor.get(adapter);
      if (!compiled) {
        const slots = Array.from({ length: arity }, (_, i) => new Slot(i)) as unknown as Args;
        const query = build(ex, ...slots).compile();
        const sources = query.parameters.map((p) => (p instanceof Slot ? p.index : -1));
        if (new Set(sources.filter((s) => s >= 0)).size !== arity) {
          throw new Error(`compiledOnce: ${query.sql} does not bind each of its ${arity} arguments`);
        }
        const constants = query.parameters;
        const select = query.query.kind === 'SelectQueryNode';
        compiled = { sql: query.sql, parameters: (values) => sources.map((s, i) => (s >= 0 ? values[s] : constants[i])), select };
        compiledFor.set(adapter, compiled);
      }
      const parameters = compiled.parameters(args);
      if (compiled.select) {
        const rows = immediateReaders.get(executor)?.(compiled.sql, parameters);
        if (rows) return { rows: rows as Row[] };
      }
      return ex.executeQuery<Row>(CompiledQuery.raw(compiled.sql, parameters) as CompiledQuery<Row>);
    },
  };
}
