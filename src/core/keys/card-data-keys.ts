import type { Db, Executor } from '../../db/schema.js';
import { resealProviderSecrets } from './provider-secrets.js';
import { CardDataKeyError, type CardDataCipher } from './secrets.js';

/** Said by every refusal that a key is missing or wrong. */
export const RESTORE_ADVICE = 'restore the key file from your backup; do not generate a new one';

/** What the database says of its card-data key, before a key is chosen for it. */
export interface CardDataKeyState {
  /** The fingerprint of the key the card data is sealed under; absent until a key is first accepted. */
  current: string | undefined;
  /** Whether any card (so any sealed value) exists. */
  holdsCardData: boolean;
  /**
   * Whether a key rotation has committed: it re-sealed every value in the current format in the
   * transaction that retired a key, so a retired key's row is the record that `v1`/`v2` values are gone.
   */
  rotated: boolean;
}

export async function cardDataKeyState(ex: Executor): Promise<CardDataKeyState> {
  const current = await currentFingerprint(ex);
  // A card in `processing` holds no card data yet (src/core/operations/card-creation.ts).
  const card = await ex.selectFrom('cards').select('id').where('status', '!=', 'processing').limit(1).executeTakeFirst();
  const retired = await ex.selectFrom('card_data_keys').select('fingerprint').where('state', '=', 'retired').limit(1).executeTakeFirst();
  return { current, holdsCardData: card !== undefined, rotated: retired !== undefined };
}

async function currentFingerprint(ex: Executor): Promise<string | undefined> {
  const row = await ex.selectFrom('card_data_keys').select('fingerprint').where('state', '=', 'current').executeTakeFirst();
  return row?.fingerprint;
}

/**
 * Accepts `cipher`'s key for the database or refuses it (`source` names where it came from): the
 * key recorded as current is accepted. With none recorded, the key is recorded as current when it
 * reads the card data there (a database from before fingerprints were kept) or there is none.
 */
export async function acceptCardDataKey(db: Db, cipher: CardDataCipher, source: string, at: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const current = await currentFingerprint(trx);
    if (current === cipher.fingerprint) return;
    if (current !== undefined) throw await wrongKey(trx, source, current, cipher.fingerprint);
    const card = await trx
      .selectFrom('cards')
      .select(['id', 'pan_encrypted'])
      .where('status', '!=', 'processing')
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    if (card && !reads(cipher, card.pan_encrypted, `${card.id}:pan`)) {
      throw new CardDataKeyError(
        `The card-data key in ${source} (fingerprint ${cipher.fingerprint}) does not read the card data in the database: ${RESTORE_ADVICE}`,
      );
    }
    // Processes starting together on Postgres may both get here: the first to record wins, the other compares.
    await trx
      .insertInto('card_data_keys')
      .values({ fingerprint: cipher.fingerprint, state: 'current', created_at: at, retired_at: null })
      .onConflict((conflict) => conflict.doNothing())
      .execute();
    const recorded = await currentFingerprint(trx);
    if (recorded !== cipher.fingerprint) throw await wrongKey(trx, source, recorded ?? '(none)', cipher.fingerprint);
  });
}

function reads(cipher: CardDataCipher, sealed: string, context: string): boolean {
  try {
    cipher.decrypt(sealed, context);
    return true;
  } catch {
    return false;
  }
}

async function wrongKey(ex: Executor, source: string, expected: string, found: string): Promise<CardDataKeyError> {
  const known = await ex.selectFrom('card_data_keys').select('retired_at').where('fingerprint', '=', found).executeTakeFirst();
  const retired = known?.retired_at ? ` (${found} was retired by a key rotation at ${known.retired_at})` : '';
  return new CardDataKeyError(
    `The card-data key in ${source} has fingerprint ${found}, but the database's card data is sealed under the key ` +
      `with fingerprint ${expected}${retired}. Expected ${source} to hold the key with fingerprint ${expected}: ${RESTORE_ADVICE}`,
  );
}

/**
 * Re-encrypts every card's PAN and CVV (and the providers' stored secrets) from `from`'s key to `to`'s in one transaction, retiring the
 * old key's fingerprint and recording the new one as current. Card creation waits for it (see
 * `lockCurrentCardDataKey`), so no value is sealed under the old key meanwhile. Returns the cards rotated.
 */
export async function reencryptCardData(
  db: Db,
  from: CardDataCipher,
  to: CardDataCipher,
  at: string,
  /** What else is sealed under the key, outside the core (the bot's remote tokens), re-sealed in the same transaction. */
  alsoReseal?: (trx: Executor, from: CardDataCipher, to: CardDataCipher) => Promise<unknown>,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const known = await trx.selectFrom('card_data_keys').select('state').where('fingerprint', '=', to.fingerprint).executeTakeFirst();
    if (known)
      throw new CardDataKeyError(
        `The key with fingerprint ${to.fingerprint} was this database's card-data key before: rotate to a new key`,
      );
    const retired = await trx
      .updateTable('card_data_keys')
      .set({ state: 'retired', retired_at: at })
      .where('fingerprint', '=', from.fingerprint)
      .where('state', '=', 'current')
      .returning('fingerprint')
      .executeTakeFirst();
    if (!retired)
      throw new CardDataKeyError(
        `The key with fingerprint ${from.fingerprint} is no longer the current card-data key: nothing was rotated`,
      );
    // A card in `processing` has none yet: its creation seals it under the current key, waiting for this.
    const cards = await trx
      .selectFrom('cards')
      .select(['id', 'pan_encrypted', 'cvv_encrypted'])
      .where('status', '!=', 'processing')
      .execute();
    for (const card of cards) {
      const pan = `${card.id}:pan`;
      const cvv = `${card.id}:cvv`;
      await trx
        .updateTable('cards')
        .set({
          pan_encrypted: to.encrypt(from.decrypt(card.pan_encrypted, pan), pan),
          cvv_encrypted: to.encrypt(from.decrypt(card.cvv_encrypted, cvv), cvv),
        })
        .where('id', '=', card.id)
        .execute();
    }
    await resealProviderSecrets(trx, from, to);
    await alsoReseal?.(trx, from, to);
    await trx
      .insertInto('card_data_keys')
      .values({ fingerprint: to.fingerprint, state: 'current', created_at: at, retired_at: null })
      .execute();
    return cards.length;
  });
}

/**
 * Refuses, inside a transaction about to seal card data, a key that a rotation has retired since this
 * process started; and holds the current key's row until the transaction ends, so a rotation waits
 * for it (a no-op update: SQLite has no `for share`, and its `begin immediate` serializes anyway).
 */
export async function lockCurrentCardDataKey(ex: Executor, cipher: CardDataCipher): Promise<void> {
  const current = await ex
    .updateTable('card_data_keys')
    .set((eb) => ({ state: eb.ref('state') }))
    .where('state', '=', 'current')
    .returning('fingerprint')
    .executeTakeFirst();
  if (current?.fingerprint !== cipher.fingerprint) throw retiredKeyError(cipher);
}

/** The refusal of a process whose card-data key is not the current one (a rotation retired it). */
export function retiredKeyError(cipher: CardDataCipher): CardDataKeyError {
  return new CardDataKeyError(
    `This process holds the card-data key ${cipher.fingerprint}, which a key rotation has retired: restart it with the current key file`,
  );
}

/** Seals a new card's PAN and CVV under the current key (refused if a rotation retired this process's key). */
export async function sealCardData(ex: Executor, cipher: CardDataCipher, cardId: string, data: { pan: string; cvv: string }) {
  await lockCurrentCardDataKey(ex, cipher);
  return sealWith(cipher, cardId, data);
}

/** A new card's PAN and CVV sealed under `cipher`'s key, for a statement that checks the key is current itself (`settleCreation`). */
export function sealWith(cipher: CardDataCipher, cardId: string, data: { pan: string; cvv: string }) {
  return { pan_encrypted: cipher.encrypt(data.pan, `${cardId}:pan`), cvv_encrypted: cipher.encrypt(data.cvv, `${cardId}:cvv`) };
}
