import pg from 'pg';

/**
 * Statement texts that Postgres connections send as named (prepared) statements, with their names.
 * node-postgres sends a plain `query(text, values)` as an unnamed statement, which Postgres parses,
 * analyses and plans again on every execution; for the money statements (CTEs over six tables) that
 * planning cost more than running them (measured: 0.5-0.6 ms planning, 0.2-0.3 ms execution). A named
 * statement is parsed once per connection, and Postgres moves to a generic plan after five executions.
 * Only texts that name their columns are taken (`preparable`): a prepared `select *` fails with "cached
 * plan must not change result type" in a running process once a migration adds a column. A migration that
 * changes the type of a column a prepared statement returns does the same: such a change takes a new
 * column (migrations only add), as a rolling restart needs anyway.
 */
const names = new Map<string, string>();

/**
 * Whether a statement names every column it returns: no `*` after `select`, `all`, `distinct`, `returning`,
 * a comma, a `.`, a `)` (`distinct on (…) *`; a multiplication after a parenthesis is taken as one too, which
 * only leaves a statement unprepared) or a comment, and no `table x`.
 */
export function preparable(text: string): boolean {
  return !/\.\s*\*|\b(select|returning|distinct|all)\s+\*|[,)]\s*\*|\*\/\s*\*|^\s*table\s/i.test(text);
}

/** Marks `text` to be sent as a named statement by Postgres connections (`PreparingClient`); false when it is not preparable. */
export function prepareOnPostgres(text: string): boolean {
  if (!preparable(text)) return false;
  if (!names.has(text)) names.set(text, `cards_${names.size + 1}`);
  return true;
}

/** The name a text is prepared under, if it is. */
export function preparedName(text: string): string | undefined {
  return names.get(text);
}

/**
 * A node-postgres client that sends the texts marked by `prepareOnPostgres` as named statements
 * (Kysely's Postgres driver calls `query(text, values)`), and everything else as it came.
 */
export class PreparingClient extends pg.Client {}

PreparingClient.prototype.query = function query(this: pg.Client, ...args: unknown[]) {
  const send = pg.Client.prototype.query as (...a: unknown[]) => unknown;
  const [text, values, callback] = args;
  const name = typeof text === 'string' ? names.get(text) : undefined;
  return name === undefined ? send.apply(this, args) : send.call(this, { name, text, values }, callback);
} as pg.Client['query'];
