import { createCipheriv, randomBytes } from 'node:crypto';

/** A value as an older version sealed it (`v1`: no associated data; `v2`: bound to its place); neither names its key. */
export function sealedOld(version: 'v1' | 'v2', key: Buffer, plain: string, context: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (version === 'v2') cipher.setAAD(Buffer.from(context, 'utf8'));
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [version, iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
}
