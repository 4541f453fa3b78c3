import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

/** Random bytes drawn 4 kB at a time: one call for each id cost as much as the rest of making it. */
const pool = Buffer.alloc(4096);
let used = pool.length;
function random16(): Uint8Array {
  if (used + 16 > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += 16;
  return pool.subarray(used - 16, used);
}

/**
 * A new id for a record written on every money movement (card transactions, journal references): a
 * UUID whose first bits are the time (version 7), so the rows a commit writes together sit side by side
 * in their indexes. Random ids scatter each insert onto a page of its own, and a commit then flushes a
 * page per row and index (measured: about 4 pages a top-up in a batch of 64). Ids made in one
 * millisecond are in no set order among themselves (nothing sorts by id).
 */
export function newRecordId(): string {
  return v7({ random: random16() });
}
