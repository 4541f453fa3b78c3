import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Encrypts card data at rest with AES-256-GCM. The key never leaves this object. Each value is bound
 * to where it belongs (`context`, e.g. the card id and field) as associated data, so a value copied
 * to another card or field does not decrypt. `v1` values, sealed before that, still read without it.
 */
export interface CardDataCipher {
  encrypt(plain: string, context: string): string;
  decrypt(sealed: string, context: string): string;
}

export function createCardDataCipher(key: Buffer): CardDataCipher {
  if (key.length !== 32) throw new Error('The card-data key must be 32 bytes');
  return {
    encrypt(plain, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v2', iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
    },
    decrypt(sealed, context) {
      const [version, iv, tag, body] = sealed.split('.');
      if ((version !== 'v1' && version !== 'v2') || !iv || !tag || !body) throw new Error('Unreadable card data');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
      if (version === 'v2') decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}

/** API tokens are 256 random bits, so a plain SHA-256 is a safe way to store and look them up. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Whether `text` has the shape of an API token this service issues. */
export function isApiTokenShaped(text: string): boolean {
  return /^vc_[A-Za-z0-9_-]{43}$/.test(text);
}

export function newApiToken(): string {
  return `vc_${randomBytes(32).toString('base64url')}`;
}
