import type { CardDataCipher } from '../core/keys/secrets.js';
import { botChatLinks } from '../bot/store/link-ends.js';
import { openCardDataKey, type CardDataKeyHandle } from './card-data-key-file.js';
import { cardDataKeyLocation } from './card-data-key-location.js';
import { createAdminService, type AdminService } from '../core/admin/admin.js';
import { createFunding, type Funding } from '../core/funding/funding.js';
import { systemClock, type Clock } from '../infra/clock.js';
import { createSandboxMailbox } from '../core/provider/mailbox.js';
import { type CardProvider, SandboxCardProvider } from '../core/provider/provider.js';
import { withTimeout } from '../core/provider/provider-timeout.js';
import { type ProviderSecretName, readProviderSecrets } from '../core/keys/provider-secrets.js';
import { LithicClient } from '../core/provider/lithic/lithic-client.js';
import { LithicCardProvider } from '../core/provider/lithic/lithic-provider.js';
import { announcingCommits, CommittedEvents } from '../core/operations/events.js';
import { createCardService, type CardService } from '../core/service.js';
import { defaultCoreSettings, type CoreSettings } from '../core/settings.js';
import { openDatabase, type OpenDatabase } from '../db/database.js';
import type { GroupCommitOptions } from '../db/sqlite/index.js';
import type { Db } from '../db/schema.js';
import { migrateToLatest } from '../db/migrate.js';
import { EVENTS_CHANNEL, listenForNotifications } from '../db/notify.js';
import type { Config } from './config.js';
import type { Logger } from '../infra/logger.js';

export interface CoreRuntime {
  core: CardService;
  admin: AdminService;
  /** Deposit requests, Telegram Payments and the operator's statistics. */
  funding: Funding;
  /** The card provider the core calls (before its time limit). */
  provider: CardProvider;
  /** The sandbox provider: the core's when `CARD_PROVIDER=sandbox`; tests and the operator's `simulate` drive it. */
  sandbox: SandboxCardProvider;
  /** Lithic's API client when `CARD_PROVIDER=lithic` (the operator's `provider lithic …`). */
  lithic?: LithicClient;
  database: OpenDatabase;
  /** The core's own handle on the database: events recorded in its transactions are announced once committed. */
  eventsDb: Db;
  clock: Clock;
  cardDataKey: CardDataKeyHandle;
  /** Seals and opens values under the card-data key (card data, and what the bot keeps that holds a secret). */
  cipher: CardDataCipher;
  /**
   * With Lithic: the secrets `provider lithic enroll` stored (src/core/keys/provider-secrets.ts), read once here;
   * a setting in the environment wins over its stored value (src/api/start.ts).
   */
  storedSecrets?: Partial<Record<ProviderSecretName, string>>;
  close(): Promise<void>;
}

export interface CoreOptions {
  databaseUrl: string;
  /**
   * The key itself (tests, benchmarks), or the file holding it: generated there for a database that
   * never had one, refused when the database's fingerprint says it is not the key of its card data.
   */
  cardDataKey: Buffer | { file: string };
  clock?: Clock;
  logger?: Logger;
  settings?: Partial<CoreSettings>;
  sandboxAsyncIssue?: boolean;
  /** Cards issued by Lithic instead of the sandbox (`CARD_PROVIDER=lithic`). */
  lithic?: { apiKey: string; apiUrl: string; fetch?: typeof fetch };
  /** How SQLite batches writes into one commit (defaults suit a service; tests widen the time cap). */
  groupCommit?: GroupCommitOptions;
  /** Postgres: the connections the processes on the database share (`DATABASE_POOL_SIZE`). */
  poolSize?: number;
}

/** Opens the database, migrates it, checks the card-data key against it, seeds a fresh one, and builds the core on top. */
export async function startCore(options: CoreOptions): Promise<CoreRuntime> {
  const clock = options.clock ?? systemClock;
  const database = openDatabase(options.databaseUrl, { groupCommit: options.groupCommit, poolSize: options.poolSize });
  try {
    await migrateToLatest(database.db);
    const { cipher, handle: cardDataKey } = await openCardDataKey(options.cardDataKey, { db: database.db, clock, logger: options.logger });
    const sandbox = new SandboxCardProvider({ clock, issueAsynchronously: options.sandboxAsyncIssue ?? false });
    // Events committed here are announced at once; on Postgres, those of other processes (the admin
    // command line, another instance) through notifications, listened for once the bot subscribes.
    const target = database.target;
    const committedEvents = new CommittedEvents(
      target.kind === 'postgres'
        ? (announce) => listenForNotifications({ url: target.url, channel: EVENTS_CHANNEL, onNotify: announce, logger: options.logger })
        : undefined,
    );
    const settings = { ...defaultCoreSettings, ...options.settings };
    const lithic =
      options.lithic &&
      new LithicClient({
        apiKey: options.lithic.apiKey,
        baseUrl: options.lithic.apiUrl,
        timeoutMs: settings.providerTimeoutMs,
        fetch: options.lithic.fetch,
      });
    const provider: CardProvider = lithic ? new LithicCardProvider(lithic) : sandbox;
    const storedSecrets = lithic ? await readProviderSecrets(database.db, cipher) : undefined;
    const deps = {
      db: announcingCommits(database.db, committedEvents),
      committedEvents,
      clock,
      // The core sees the provider through the timeout; `provider` below is the one it wraps (the sandbox unless Lithic).
      provider: withTimeout(provider, {
        timeoutMs: settings.providerTimeoutMs,
        onLateSuccess: (late) => options.logger?.error({ provider: late }, 'the card provider finished a call after it was given up'),
      }),
      mailbox: createSandboxMailbox(database.db, clock),
      cipher,
      settings,
      chatLinks: botChatLinks,
    };
    const admin = createAdminService(deps);
    await admin.seedDefaults();
    // Before anything is served: operations a crash left waiting on the provider are settled as failed. Those
    // a provider that remembers (Lithic) must be asked about wait for the housekeeping, which asks it at once in
    // a service (src/app/housekeeping.ts): no process, nor the admin command line, waits on Lithic to start.
    const recovered = await admin.recoverUnasked();
    if (recovered.length > 0) options.logger?.warn({ operations: recovered }, 'settled interrupted provider operations');
    const close = async () => {
      await committedEvents.close();
      await database.close();
    };
    return {
      core: createCardService(deps),
      admin,
      funding: createFunding(deps),
      provider,
      sandbox,
      ...(lithic ? { lithic } : {}),
      database,
      eventsDb: deps.db,
      clock,
      cardDataKey,
      cipher,
      ...(storedSecrets ? { storedSecrets } : {}),
      close,
    };
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
    providerTimeoutMs: config.PROVIDER_TIMEOUT_MS,
    authorizationHoldDays: config.AUTHORIZATION_HOLD_DAYS,
  };
}

/**
 * The core as the settings describe it: `npm start`, `npm run api` and the admin command line. A key
 * problem (`CardDataKeyError`) stops it before anything is served.
 */
export async function startCoreFromConfig(config: Config, logger: Logger): Promise<CoreRuntime> {
  const keyFile = cardDataKeyLocation(config.CARD_DATA_KEY_FILE, config.DATABASE_URL);
  if (keyFile.warning !== undefined) logger.warn({ file: keyFile.file }, keyFile.warning);
  return startCore({
    databaseUrl: config.DATABASE_URL,
    poolSize: config.DATABASE_POOL_SIZE,
    cardDataKey: { file: keyFile.file },
    logger,
    settings: coreSettingsFrom(config),
    sandboxAsyncIssue: config.SANDBOX_ASYNC_ISSUE,
    ...(config.CARD_PROVIDER === 'lithic' && config.LITHIC_API_KEY !== undefined
      ? { lithic: { apiKey: config.LITHIC_API_KEY, apiUrl: config.LITHIC_API_URL } }
      : {}),
  });
}
