import { CardServiceError } from '../core/rules/errors.js';
import { recordEvent, type CardTransactionEvent } from '../core/operations/events.js';
import type { Cents } from '../core/ledger/money.js';
import type { RemoteCardClient } from './client.js';
import { createKnownCards } from './known-cards.js';
import { ownKey } from './own-operations.js';
import type { DueUser } from './poll-schedule.js';
import { remoteTables } from './tables.js';
import { claimedRequest, type PollDeps } from './poll.js';
import { isStale, markSeen, seenAmong } from './seen.js';
import type { CardTransaction } from '../interface/objects.js';
import type { TransactionPage } from './shapes.js';

/**
 * The poll of a user's transactions (4.12): claimed first, then the first page read (and the next ones back
 * to the last seen); each new settled transaction recorded as an outbox event with the card's balance after
 * it, oldest first. The first poll of a user takes what is there as history; the bot's own operations under
 * way are left for their answer to mark seen.
 */
export async function pollTransactions(deps: PollDeps, due: DueUser, token: string): Promise<void> {
  const { db, client, clock, known, pageSize, maxPages } = deps;
  const claimedAt = clock.now();
  if (!(await known.claimUser(due, claimedAt))) return;
  const session = client.as(token);
  const page = await claimedRequest(
    () => session.listTransactions({ page: 1, limit: pageSize }),
    () => known.releaseUser(due, claimedAt),
  );
  deps.answered();
  const user = await remoteTables(db)
    .selectFrom('bot_remote_users')
    .select('baselined_at')
    .where('user_id', '=', due.userId)
    .executeTakeFirst();
  if (!user) return;
  const baselined = user.baselined_at !== null;
  const { items, seen } = await readBackToSeen(deps, due.userId, session, page, baselined ? maxPages : 1);
  // The bot's own operation under way on a card: its transaction waits (not marked seen) until its answer
  // marks it seen. Read after the page: an operation settled since left its transaction seen, so not recorded.
  const unseen = items.filter((t) => !seen.has(t.id) && settled(t) !== undefined);
  const own = baselined && unseen.length > 0 ? await known.ownUnderWay(due.userId, clock.now().getTime()) : new Set<string>();
  const news = unseen.filter((t) => !own.has(ownKey(t.cardId, t.side)));
  if (baselined && news.length === 0) return;
  // The card's balance after each new transaction: its balance now, taken back through the later ones.
  const balances = new Map<string, Cents>();
  if (baselined) {
    for (const cardId of new Set(news.map((t) => t.cardId))) {
      let balance: Cents;
      try {
        balance = (await session.getCard(cardId)).balance;
      } catch (error) {
        if (!(error instanceof CardServiceError && error.code === 'CARD_NOT_FOUND')) throw error;
        balance = 0;
      }
      for (const t of items) {
        if (t.cardId !== cardId) continue;
        balances.set(t.id, balance);
        if (settled(t) === 'Approved') balance -= (t.side === 'Credit' ? 1 : -1) * Math.abs(t.amount);
      }
    }
  }
  await db.transaction().execute(async (trx) => {
    const t = remoteTables(trx);
    const at = clock.now().toISOString();
    const baseline = await t
      .updateTable('bot_remote_users')
      .set({ baselined_at: at })
      .where('user_id', '=', due.userId)
      .where('baselined_at', 'is', null)
      .executeTakeFirst();
    const history = Number(baseline.numUpdatedRows) === 1;
    // Baselined by another instance since it was read: the balances were not taken; the next poll pushes these.
    if (!history && !baselined) return;
    const known = createKnownCards(trx);
    const cards = new Set((history ? items : news).map((item) => item.cardId));
    for (const cardId of cards) await known.remember(due.userId, cardId, new Date(at));
    if (history) {
      for (const item of items) await markSeen(trx, due.userId, 'transaction', item.id, at);
      return;
    }
    for (const item of [...news].reverse()) {
      if (!(await markSeen(trx, due.userId, 'transaction', item.id, at)) || isStale(item.createdAt, at)) continue;
      const event: CardTransactionEvent = {
        kind: 'card_transaction',
        transactionId: item.id,
        cardId: item.cardId,
        cardName: item.cardName,
        maskedPan: item.maskedPan,
        status: settled(item)!,
        side: item.side,
        type: item.type,
        amount: Math.abs(item.amount),
        currency: item.currency,
        merchantName: item.merchantName,
        declineCode: item.declineCode,
        cardBalance: balances.get(item.id) ?? 0,
        createdAt: item.createdAt || at,
      };
      await recordEvent(trx, due.userId, event, at);
    }
  });
}

/**
 * The newest transactions back to the first one already seen: more than a page can come between two polls
 * (a busy card, a service that was down), and the older ones are then on the next pages. Read newest first,
 * up to `pages` pages; an item that moved to the next page while it was read is taken once.
 */
async function readBackToSeen(
  { db, pageSize }: Pick<PollDeps, 'db' | 'pageSize'>,
  userId: string,
  session: ReturnType<RemoteCardClient['as']>,
  first: TransactionPage,
  pages: number,
): Promise<{ items: CardTransaction[]; seen: Set<string> }> {
  const items = [...first.data];
  const seen = await seenAmong(
    db,
    userId,
    'transaction',
    items.map((t) => t.id),
  );
  let page = first;
  for (let number = 2; number <= Math.min(pages, page.pagination.totalPages); number++) {
    if (page.data.length === 0 || page.data.some((t) => seen.has(t.id))) break;
    page = await session.listTransactions({ page: number, limit: pageSize });
    const taken = new Set(items.map((t) => t.id));
    const more = page.data.filter((t) => !taken.has(t.id));
    items.push(...more);
    for (const id of await seenAmong(
      db,
      userId,
      'transaction',
      more.map((t) => t.id),
    ))
      seen.add(id);
  }
  return { items, seen };
}

/** A settled transaction's status as the bot shows it; undefined while it is not settled (it is pushed once it is). */
function settled(t: CardTransaction): 'Approved' | 'Declined' | undefined {
  const status = t.status.trim().toLowerCase();
  return status === 'approved' ? 'Approved' : status === 'declined' ? 'Declined' : undefined;
}
