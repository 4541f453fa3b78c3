import { CompiledQuery, type Compilable, type QueryResult } from 'kysely';
import type { Executor } from './schema.js';

/** Stands for the i-th argument while a query is compiled once. */
class Slot {
  constructor(readonly index: number) {}
}

/**
 * A query built and compiled once per dialect, then re-executed with new argument values through
 * `executeQuery`: hot paths skip Kysely's building and compiling, and the SQLite statement cache
 * skips preparing. Only for queries whose SQL does not depend on the values (no `is null` chosen
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
  const compiledFor = new WeakMap<object, { sql: string; parameters: (args: Args) => unknown[] }>();
  return {
    async execute(ex, ...args) {
      const adapter = ex.getExecutor().adapter;
      let compiled = compiledFor.get(adapter);
      if (!compiled) {
        const slots = Array.from({ length: arity }, (_, i) => new Slot(i)) as unknown as Args;
        const query = build(ex, ...slots).compile();
        const sources = query.parameters.map((p) => (p instanceof Slot ? p.index : -1));
        if (new Set(sources.filter((s) => s >= 0)).size !== arity) {
          throw new Error(`compiledOnce: ${query.sql} does not bind each of its ${arity} arguments`);
        }
        const constants = query.parameters;
        compiled = { sql: query.sql, parameters: (values) => sources.map((s, i) => (s >= 0 ? values[s] : constants[i])) };
        compiledFor.set(adapter, compiled);
      }
      return ex.executeQuery<Row>(CompiledQuery.raw(compiled.sql, compiled.parameters(args)) as CompiledQuery<Row>);
    },
  };
}
