import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { resealBotSecrets } from '../bot/store/sealed-tokens.js';
import { acceptCardDataKey, cardDataKeyState, reencryptCardData, RESTORE_ADVICE } from '../core/keys/card-data-keys.js';
import type { Clock } from '../infra/clock.js';
import { CardDataKeyError, cardDataKeyFingerprint, createCardDataCipher, type CardDataCipher } from '../core/keys/secrets.js';
import type { Db } from '../db/schema.js';
import type { Logger } from '../infra/logger.js';
import { createPrivateFileOnce, isOpenToOthers, moveFile, replacePrivateFile } from '../infra/private-files.js';

/**
 * The card-data key as a file (32 bytes of base64, mode 0600), checked against the fingerprint the
 * database keeps. A key is generated only for a database that never had one; a missing or wrong key
 * stops the start instead, since a new key would leave every sealed value unreadable.
 */

interface KeyFileDeps {
  db: Db;
  clock: Clock;
  logger?: Logger;
}

/** Where a rotation puts the new key before the database commits to it (see `rotateCardDataKeyFile`). */
const stagedKeyFile = (file: string) => `${file}.next`;
/** Where a rotation keeps the key it retired. */
const retiredKeyFile = (file: string, fingerprint: string) => `${file}.old-${fingerprint}`;

/** Reads a key file, refusing one that others may read or that is not a key. */
export function readCardDataKeyFile(file: string): Buffer {
  if (!statSync(file).isFile()) throw new CardDataKeyError(`The card-data key file ${file} is not a file`);
  if (isOpenToOthers(file)) {
    const mode = (statSync(file).mode & 0o777).toString(8).padStart(4, '0');
    throw new CardDataKeyError(`The card-data key file ${file} is open to group or others (mode ${mode}): chmod 600 ${file}`);
  }
  const text = readFileSync(file, 'utf8').trim();
  if (!/^[A-Za-z0-9+/]{43}=$/.test(text)) throw new CardDataKeyError(`The card-data key in ${file} is not 32 bytes of base64`);
  return Buffer.from(text, 'base64');
}

const encodeKey = (key: Buffer) => `${key.toString('base64')}\n`;

/**
 * The key in `file`, accepted by the database: generated there first when the database has no key
 * recorded and no card data (by one process only, however many start together). A rotation that
 * committed but did not get to swap the files is finished here.
 *
 * @example
 * const key = await openCardDataKeyFile('data/card-data.key', { db, clock, logger });
 */
export async function openCardDataKeyFile(keyFile: string, { db, clock, logger }: KeyFileDeps): Promise<Buffer> {
  const file = path.resolve(keyFile);
  const state = await cardDataKeyState(db);
  if (!existsSync(file)) {
    // A recorded fingerprint means a key existed, even with no card yet: a database restored from
    // a backup, or cards to come from one, would need it. Only a database that never had a key gets one.
    if (state.current !== undefined || state.holdsCardData) {
      const expected = state.current !== undefined ? `the key with fingerprint ${state.current}` : 'the key that sealed its card data';
      throw new CardDataKeyError(
        `The card-data key file ${file} is missing, but the database ${state.holdsCardData ? 'holds card data' : 'has recorded a key'}. ` +
          `Expected ${file} to hold ${expected} (found: no file): ${RESTORE_ADVICE}`,
      );
    }
    const fresh = randomBytes(32);
    if (createPrivateFileOnce(file, encodeKey(fresh))) {
      logger?.warn(
        { file, fingerprint: cardDataKeyFingerprint(fresh) },
        'Generated a new card-data key; back it up: card data cannot be read without it',
      );
    }
  }
  let key = readCardDataKeyFile(file);
  if (state.current !== undefined && cardDataKeyFingerprint(key) !== state.current)
    key = finishRotation(file, state.current, logger) ?? key;
  await acceptCardDataKey(db, createCardDataCipher(key, { readsOlderFormats: !state.rotated }), file, clock.now().toISOString());
  return key;
}

/** The staged key of a rotation whose database transaction committed, moved into place; else nothing. */
function finishRotation(file: string, current: string, logger: Logger | undefined): Buffer | undefined {
  const staged = stagedKeyFile(file);
  if (!existsSync(staged)) return undefined;
  const key = readCardDataKeyFile(staged);
  if (cardDataKeyFingerprint(key) !== current) return undefined;
  try {
    moveFile(staged, file);
    logger?.warn({ file, fingerprint: current }, 'Finished an interrupted card-data key rotation: the new key is now in place');
  } catch (error) {
    // Another process starting at the same time finished it first.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return readCardDataKeyFile(file);
}

export interface KeyRotation {
  from: string;
  to: string;
  cards: number;
  keyFile: string;
  /** Where the retired key is kept (mode 0600), or was until the rotation deleted it (`keepRetired: false`). */
  retiredKeyFile: string;
  retiredKeyKept: boolean;
}

export interface RotationOptions {
  /**
   * Whether the retired key stays beside the key file: backups of the database taken before the rotation
   * need it. Deleted only once every value is re-sealed under the new key and that key is in place.
   */
  keepRetired: boolean;
}

/**
 * Rotates the card-data key from `current` (the key in `keyFile`) to the one in `newKeyFile`. Crash-safe
 * in this order: the old key is kept beside the key file; the new key is staged beside it (`.next`);
 * every card is re-encrypted and the new fingerprint recorded in one transaction; the staged key
 * replaces the key file. A crash before the commit leaves the old key current and in place (the
 * staged file is ignored); a crash after it is finished by the next start (`openCardDataKeyFile`).
 */
export async function rotateCardDataKeyFile(
  keyFile: string,
  current: Buffer,
  newKeyFile: string,
  { db, clock }: KeyFileDeps,
  { keepRetired }: RotationOptions = { keepRetired: true },
): Promise<KeyRotation> {
  const file = path.resolve(keyFile);
  const source = path.resolve(newKeyFile);
  if (!existsSync(source)) throw new CardDataKeyError(`The new card-data key file ${source} does not exist`);
  const next = readCardDataKeyFile(source);
  // The first rotation re-seals `v1`/`v2` values; a later one refuses them, as every read does by then.
  const from = createCardDataCipher(current, await olderFormats(db));
  const to = createCardDataCipher(next);
  if (from.fingerprint === to.fingerprint)
    throw new CardDataKeyError(`${source} holds the current card-data key (fingerprint ${from.fingerprint}): nothing to rotate`);
  const retired = retiredKeyFile(file, from.fingerprint);
  createPrivateFileOnce(retired, encodeKey(current));
  const staged = stagedKeyFile(file);
  replacePrivateFile(staged, encodeKey(next));
  let cards: number;
  try {
    cards = await reencryptCardData(db, from, to, clock.now().toISOString(), resealBotSecrets);
  } catch (error) {
    if ((await cardDataKeyState(db)).current === from.fingerprint) rmSync(staged, { force: true });
    throw error;
  }
  moveFile(staged, file);
  if (!keepRetired) rmSync(retired, { force: true });
  return { from: from.fingerprint, to: to.fingerprint, cards, keyFile: file, retiredKeyFile: retired, retiredKeyKept: keepRetired };
}

/** The card-data key a core runs with, seen by its fingerprint only. */
export interface CardDataKeyHandle {
  fingerprint: string;
  /** The key file, when the core was started from one. */
  file: string | undefined;
  /** Re-encrypts all card data under the key in `newKeyFile` and puts that key in place (`npm run admin -- keys rotate`). */
  rotate(newKeyFile: string, options?: RotationOptions): Promise<KeyRotation>;
}

/**
 * The cipher for a core and the handle it shows of its key: from the key itself (tests, benchmarks;
 * still checked against the database's fingerprint) or from its file (`openCardDataKeyFile`).
 */
export async function openCardDataKey(
  source: Buffer | { file: string },
  deps: KeyFileDeps,
): Promise<{ cipher: CardDataCipher; handle: CardDataKeyHandle }> {
  if (Buffer.isBuffer(source)) {
    const cipher = createCardDataCipher(source, await olderFormats(deps.db));
    await acceptCardDataKey(deps.db, cipher, 'the key given to the core', deps.clock.now().toISOString());
    const rotate = () => Promise.reject(new CardDataKeyError('This core was given its key, not a key file: there is no file to rotate'));
    return { cipher, handle: { fingerprint: cipher.fingerprint, file: undefined, rotate } };
  }
  const key = await openCardDataKeyFile(source.file, deps);
  const cipher = createCardDataCipher(key, await olderFormats(deps.db));
  const rotate = (newKeyFile: string, options?: RotationOptions) => rotateCardDataKeyFile(source.file, key, newKeyFile, deps, options);
  return { cipher, handle: { fingerprint: cipher.fingerprint, file: path.resolve(source.file), rotate } };
}

const olderFormats = async (db: Db) => ({ readsOlderFormats: !(await cardDataKeyState(db)).rotated });
