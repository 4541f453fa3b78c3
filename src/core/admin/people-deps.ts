import type { CoreDeps } from '../deps.js';
import { AdminError } from './errors.js';

/** What the operator's operations on people (people.ts, tokens.ts) take. */
export type PeopleDeps = Pick<CoreDeps, 'db' | 'clock' | 'chatLinks'>;

/** The user, or an `AdminError` naming the id when there is none. */
export async function requireUser({ db }: Pick<PeopleDeps, 'db'>, userId: string) {
  const user = await db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
  if (!user) throw new AdminError(`No user with id ${userId}`);
  return user;
}
