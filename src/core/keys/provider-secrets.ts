import { createHmac } from 'node:crypto';
import type { Db, Executor } from '../../db/schema.js';
import { lockCurrentCardDataKey } from './card-data-keys.js';
import type { CardDataCipher } from './secrets.js';

// What a card provider gave the operator to verify its calls, kept in `provider_secrets` sealed with the
// card-data key (migrations/20261129_03_provider_secrets.ts): `provider lithic enroll` stores Lithic's two
// secrets here, and a start without them in its environment reads them from here.

/** The secrets stored, by name: the names of the settings they stand in for. */
export const PROVIDER_SECRET_NAMES = ['LITHIC_ASA_SECRET', 'LITHIC_WEBHOOK_SECRET'] as const;
export type ProviderSecretName = (typeof PROVIDER_SECRET_NAMES)[number];

/** What a stored secret is bound to: its name (a value copied under another name does not open). */
const context = (name: string) => `provider_secrets:${name}`;

/**
 * What tells secrets apart without revealing them, for the operator to compare: 12 hex digits of an HMAC
 * keyed by the secret.
 */
export function secretFingerprint(secret: string): string {
  return createHmac('sha256', secret).update('provider-secret-fingerprint').digest('hex').slice(0, 12);
}

/** Stores `secrets` sealed under the current card-data key (refused if a rotation retired this process's key), replacing any. */
export async function storeProviderSecrets(
  db: Db,
  cipher: CardDataCipher,
  secrets: Partial<Record<ProviderSecretName, string>>,
  at: string,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockCurrentCardDataKey(trx, cipher);
    for (const [name, value] of Object.entries(secrets)) {
      if (value === undefined) continue;
      const sealed = cipher.encrypt(value, context(name));
      await trx
        .insertInto('provider_secrets')
        .values({ name, value_encrypted: sealed, updated_at: at })
        .onConflict((conflict) => conflict.column('name').doUpdateSet({ value_encrypted: sealed, updated_at: at }))
        .execute();
    }
  });
}

/** The stored secrets, opened (read once at start: src/app/compose.ts). */
export async function readProviderSecrets(ex: Executor, cipher: CardDataCipher): Promise<Partial<Record<ProviderSecretName, string>>> {
  const rows = await ex.selectFrom('provider_secrets').select(['name', 'value_encrypted']).execute();
  const secrets: Partial<Record<ProviderSecretName, string>> = {};
  for (const row of rows) {
    if ((PROVIDER_SECRET_NAMES as readonly string[]).includes(row.name)) {
      secrets[row.name as ProviderSecretName] = cipher.decrypt(row.value_encrypted, context(row.name));
    }
  }
  return secrets;
}

/** Re-seals every stored secret from `from`'s key to `to`'s, in a key rotation's transaction. Returns how many. */
export async function resealProviderSecrets(
  ex: Executor,
  from: Pick<CardDataCipher, 'decrypt'>,
  to: Pick<CardDataCipher, 'encrypt'>,
): Promise<number> {
  const rows = await ex.selectFrom('provider_secrets').select(['name', 'value_encrypted']).execute();
  for (const row of rows) {
    await ex
      .updateTable('provider_secrets')
      .set({ value_encrypted: to.encrypt(from.decrypt(row.value_encrypted, context(row.name)), context(row.name)) })
      .where('name', '=', row.name)
      .execute();
  }
  return rows.length;
}
