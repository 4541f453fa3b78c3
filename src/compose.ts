import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { botChatLinks } from './bot/repository.js';
import { createAdminService, type AdminService } from './core/admin.js';
import { systemClock, type Clock } from './core/clock.js';
import { createSandboxMailbox } from './core/mailbox.js';
import { SandboxCardProvider } from './core/provider.js';
import { createCardDataCipher } from './core/secrets.js';
import { createCardService, type CardService } from './core/service.js';
import { defaultCoreSettings, type CoreSettings } from './core/settings.js';
import { openDatabase, type OpenDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import type { Config } from './config.js';
import type { Logger } from './logger.js';

export interface CoreRuntime {
  core: CardService;
  admin: AdminService;
  provider: SandboxCardProvider;
  database: OpenDatabase;
  clock: Clock;
  close(): Promise<void>;
}

export interface CoreOptions {
  databaseUrl: string;
  cardDataKey: Buffer;
  clock?: Clock;
  settings?: Partial<CoreSettings>;
  sandboxAsyncIssue?: boolean;
}

/** Opens the database, migrates it, seeds a fresh one, and builds the core on top. */
export async function startCore(options: CoreOptions): Promise<CoreRuntime> {
  const clock = options.clock ?? systemClock;
  const database = openDatabase(options.databaseUrl);
  try {
    await migrateToLatest(database.db);
    const provider = new SandboxCardProvider({ clock, issueAsynchronously: options.sandboxAsyncIssue ?? false });
    const deps = {
      db: database.db,
      clock,
      provider,
      mailbox: createSandboxMailbox(database.db, clock),
      cipher: createCardDataCipher(options.cardDataKey),
      settings: { ...defaultCoreSettings, ...options.settings },
      chatLinks: botChatLinks,
    };
    const admin = createAdminService(deps);
    await admin.seedDefaults();
    return { core: createCardService(deps), admin, provider, database, clock, close: () => database.close() };
  } catch (error) {
    await database.close();
    throw error;
  }
}

/** The core's settings from the process settings. */
export function coreSettingsFrom(config: Config): Partial<CoreSettings> {
  return {
    environment: config.APP_ENV,
    topupCooldownSeconds: config.TOPUP_COOLDOWN_SECONDS,
    withdrawCooldownSeconds: config.WITHDRAW_COOLDOWN_SECONDS,
    otpRetentionSeconds: config.OTP_RETENTION_SECONDS,
  };
}

/**
 * The card-data key: generated once into the data folder on first start (mode 0600, kept out of
 * the repository). The log says where it is, never what it is.
 */
export function loadCardDataKey(file: string, logger: Logger): Buffer {
  const resolved = path.resolve(file);
  if (existsSync(resolved)) {
    const key = Buffer.from(readFileSync(resolved, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`The card-data key in ${resolved} is not 32 bytes of base64`);
    return key;
  }
  mkdirSync(path.dirname(resolved), { recursive: true });
  const key = randomBytes(32);
  writeFileSync(resolved, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(resolved, 0o600);
  logger.warn({ file: resolved }, 'Generated a new card-data key; back it up: card data cannot be read without it');
  return key;
}

export async function startCoreFromConfig(config: Config, logger: Logger): Promise<CoreRuntime> {
  return startCore({
    databaseUrl: config.DATABASE_URL,
    cardDataKey: loadCardDataKey(config.CARD_DATA_KEY_FILE, logger),
    settings: coreSettingsFrom(config),
    sandboxAsyncIssue: config.SANDBOX_ASYNC_ISSUE,
  });
}
