import { createCipheriv, createDecipheriv, createHmac, hash, randomBytes } from 'node:crypto';

/**
 * The card-data key is missing, wrong, open to other users, or not the one a value was sealed under.
 * Starting stops on it with exit code 2, and the message says what to restore.
 */
export class CardDataKeyError extends Error {
  override readonly name = 'CardDataKeyError';
}

/**
 * What tells card-data keys apart without revealing them: safe to store beside the data and to print.
 *
 * @example
 * cardDataKeyFingerprint(key); // '3f9a0c1d2e4b5a69'
 */
export function cardDataKeyFingerprint(key: Buffer): string {
  return createHmac('sha256', key).update('card-data-key-fingerprint').digest('hex').slice(0, 16);
}

/**
 * Encrypts card data at rest with AES-256-GCM. The key never leaves this object. Each value is bound
 * to where it belongs (`context`, e.g. the card id and field) as associated data, so a value copied
 * to another card or field does not decrypt, and names the key that sealed it
 * (`v3.<fingerprint>.<iv>.<tag>.<body>`), so a value under another key is refused by name rather
 * than failing as garbled. `v2` (bound, no key name) and `v1` (neither) values still read until the
 * database's first key rotation, which re-seals every value as `v3`: from then on only something other than
 * this service can have written one (a value moved between cards, say), so they are refused
 * (`readsOlderFormats: false`). Every tag is the full 16 bytes: GCM would check a shorter one, as
 * short as 4 bytes, which a forger needs far fewer guesses to match.
 */
export interface CardDataCipher {
  /** The fingerprint of this cipher's key. */
  readonly fingerprint: string;
  encrypt(plain: string, context: string): string;
  decrypt(sealed: string, context: string): string;
}

export interface CardDataCipherOptions {
  /** Whether `v1` and `v2` values still read: until the database's first key rotation (see `cardDataKeyState`). */
  readsOlderFormats: boolean;
}

const TAG_BYTES = 16;
const IV_BYTES = 12;

export function createCardDataCipher(
  key: Buffer,
  { readsOlderFormats }: CardDataCipherOptions = { readsOlderFormats: false },
): CardDataCipher {
  if (key.length !== 32) throw new Error('The card-data key must be 32 bytes');
  const fingerprint = cardDataKeyFingerprint(key);
  const open = (iv: string, tag: string, body: string, context: string | undefined) => {
    const ivBytes = Buffer.from(iv, 'base64');
    const tagBytes = Buffer.from(tag, 'base64');
    if (ivBytes.length !== IV_BYTES || tagBytes.length !== TAG_BYTES) throw new Error('Unreadable card data');
    const decipher = createDecipheriv('aes-256-gcm', key, ivBytes, { authTagLength: TAG_BYTES });
    if (context !== undefined) decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tagBytes);
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
  };
  return {
    fingerprint,
    encrypt(plain, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v3', fingerprint, iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
    },
    decrypt(sealed, context) {
      const parts = sealed.split('.');
      const [version] = parts;
      if (version === 'v3' && parts.length === 5 && parts.every(Boolean)) {
        const [, keyId, iv, tag, body] = parts as [string, string, string, string, string];
        if (keyId !== fingerprint) {
          throw new CardDataKeyError(
            `Card data sealed under the card-data key ${keyId} cannot be read with key ${fingerprint}: ` +
              'start with the key file the database names (a process started before a key rotation must be restarted)',
          );
        }
        return open(iv, tag, body, context);
      }
      if ((version === 'v1' || version === 'v2') && parts.length === 4 && parts.every(Boolean)) {
        if (!readsOlderFormats) {
          throw new Error(
            `Card data sealed in the ${version} format is refused: a key rotation has re-sealed every value in the current format, ` +
              'so this one was written since by something other than this service',
          );
        }
        const [, iv, tag, body] = parts as [string, string, string, string];
        return open(iv, tag, body, version === 'v2' ? context : undefined);
      }
      throw new Error('Unreadable card data');
    },
  };
}

/**
 * API tokens are 256 random bits, so a plain SHA-256 is a safe way to store and look them up. Once per
 * request: the one-shot `hash` takes 0.24 µs where a `Hash` object takes 0.6.
 */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** Whether `text` has the shape of an API token this service issues. */
export function isApiTokenShaped(text: string): boolean {
  return /^vc_[A-Za-z0-9_-]{43}$/.test(text);
}

export function newApiToken(): string {
  return `vc_${randomBytes(32).toString('base64url')}`;
}
