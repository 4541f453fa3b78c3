import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';
import { PROVIDER_TIMEOUT_DEFAULT_MS, PROVIDER_TIMEOUT_MAX_MS } from '../core/provider/provider-timeout.js';
import { defaultCoreSettings } from '../core/settings.js';
import { DEFAULT_POSTGRES_POOL_SIZE } from '../db/pool-size.js';

const flag = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');
const seconds = (fallback: number) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(86_400 * 7)
    .default(fallback);
const count = (fallback: number, max = 1_000_000) => z.coerce.number().int().min(1).max(max).default(fallback);
/** Telegram lets a bot delete its own messages for 48 hours; a longer self-deletion could not keep its promise. */
export const TELEGRAM_DELETE_WINDOW_SECONDS = 48 * 3600;
const selfDeletingTtl = (fallback: number) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(TELEGRAM_DELETE_WINDOW_SECONDS, {
      error: `at most ${TELEGRAM_DELETE_WINDOW_SECONDS} (Telegram deletes a bot's messages only within 48 hours)`,
    })
    .default(fallback);

/** Every setting, with its default. `.env.example` lists the same names (`test/deploy-files.test.ts`). */
const configSchema = z.object({
  BOT_TOKEN: z
    .string()
    .regex(/^\d+:[\w-]+$/, { error: 'must look like 123456:ABC-DEF…' })
    .optional(),
  TELEGRAM_API_ROOT: z
    .url({ protocol: /^https?$/, error: 'an http:// or https:// URL' })
    .refine((url) => !url.endsWith('/') && !url.includes('?') && !url.includes('#'), {
      error: 'the root the bot adds /bot<token>/<method> to, without a trailing / (e.g. https://api.telegram.org)',
    })
    .default('https://api.telegram.org'),
  DATABASE_URL: z.string().min(1).default('data/cards.db'),
  /** Postgres: the connections each process keeps open (its concurrent transactions); SQLite has one writer. */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(1_000).default(DEFAULT_POSTGRES_POOL_SIZE),
  APP_ENV: z.string().min(1).default(defaultCoreSettings.environment),
  HTTP_ENABLED: flag.default(true),
  HTTP_HOST: z.string().min(1).default('127.0.0.1'),
  HTTP_PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  HTTP_BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).max(10_485_760).default(16_384),
  /** A request that has not been answered after this long is cut off. */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(30_000),
  /**
   * Whom to believe about the client's address (X-Forwarded-For), for the per-address limits and logs:
   * unset (the socket's address), the number of proxies in front of the service (hops), or the proxies'
   * addresses/CIDRs separated by commas. `true` (believe anyone) is refused: any client could then name
   * its own address, and escape the per-address limits.
   */
  HTTP_TRUST_PROXY: z
    .string()
    .refine((value) => value !== 'true', {
      error:
        'true would believe X-Forwarded-For from anyone, so any client could pick its own address and escape the per-address ' +
        "limits: set the number of proxies in front of the service (e.g. HTTP_TRUST_PROXY=1), or the proxies' addresses/CIDRs",
    })
    .refine((value) => value === 'true' || value === 'false' || /^[1-9]$/.test(value) || value.split(',').every(isAddressOrCidr), {
      error: "the number of proxies in front of the service (1-9), or the proxies' addresses/CIDRs separated by commas (or false)",
    })
    .optional()
    .transform(trustProxyOption),
  /** Requests per minute one API token may make. */
  API_RATE_LIMIT_PER_TOKEN: count(600),
  /** Requests per minute one client address may make (all tokens together). */
  API_RATE_LIMIT_PER_ADDRESS: count(1200),
  /** Failed authentications per 15 minutes one client address may make before its missing and invalid tokens get 429. */
  API_AUTH_FAILURES_PER_ADDRESS: count(20),
  /** Posts per minute one address may make to the bot's webhook. */
  WEBHOOK_RATE_LIMIT_PER_ADDRESS: count(6_000),
  /**
   * Where the rate limits are counted when several processes serve one database: a Redis they all reach
   * (`redis://` or `rediss://`, with the password and database number in the URL). Unset: each process counts alone.
   */
  REDIS_URL: z.url({ protocol: /^rediss?$/, hostname: /./, error: 'a redis:// or rediss:// URL with a host' }).optional(),
  /** What every key this deployment writes in Redis starts with: two deployments sharing a Redis need two prefixes. */
  REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,64}$/, { error: 'up to 64 letters, digits, dots, dashes, underscores or colons' })
    .default('virtual-cards:'),
  /** How long a Redis command may take before its caller counts alone instead (a limit check never waits longer). */
  REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  /** Stored Idempotency-Key replies kept per user; the oldest go first. */
  IDEMPOTENCY_MAX_KEYS_PER_USER: count(1000),
  /** Prometheus metrics on a listener of their own; off unless METRICS_PORT is set. */
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  METRICS_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  BOT_ENABLED: flag.default(true),
  /**
   * Remote mode: the bot in front of another service that speaks the interface (the spec's `{base_url}`);
   * no local wallet, cards or `/api/v1` then.
   */
  CARD_SERVICE_URL: z
    .url({ protocol: /^https?$/, error: "an http:// or https:// URL (the service's base, without /api/v1)" })
    .refine((url) => !url.includes('?') && !url.includes('#'), { error: 'a base URL, without a query or fragment' })
    .refine((url) => !url.startsWith('http:') || isLoopbackUrl(url), {
      error:
        "plain http:// would send every user's API token and their cards' details unencrypted: use the service's https:// URL " +
        '(http:// only on this machine: 127.0.0.1, localhost or [::1])',
    })
    .optional(),
  /** Remote mode: how often each linked user's known cards are polled for new OTPs and transactions. */
  CARD_SERVICE_POLL_SECONDS: z.coerce.number().int().min(1).max(3_600).default(15),
  /** Remote mode: how long one request to the card service may take before it is given up. */
  CARD_SERVICE_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /** Remote mode: the most requests a second the bot sends the card service, all users together. */
  CARD_SERVICE_MAX_RPS: z.coerce.number().int().min(1).max(1_000).default(20),
  BOT_MODE: z.enum(['polling', 'webhook']).default('polling'),
  WEBHOOK_URL: z.url().optional(),
  WEBHOOK_SECRET: z
    .string()
    .regex(/^[A-Za-z0-9_-]{32,256}$/, {
      error: '32-256 of A-Z a-z 0-9 _ - (a shorter secret can be guessed; e.g. openssl rand -hex 32)',
    })
    .optional(),
  /**
   * The Mini App page that shows card details outside the chat (served by the HTTP server at this URL's
   * path): public HTTPS, or http on 127.0.0.1/localhost for tests. Unset: Details sends a self-deleting message.
   */
  WEBAPP_URL: z
    .string()
    .refine(isWebAppUrl, { error: 'an https:// URL (http:// only on 127.0.0.1 or localhost), without a #fragment' })
    .optional(),
  SENSITIVE_TTL_SECONDS: selfDeletingTtl(60),
  OTP_TTL_SECONDS: selfDeletingTtl(300),
  /** How long OTP codes are kept anywhere (card_otps, outbox payloads, stored idempotent replies). */
  OTP_RETENTION_SECONDS: seconds(defaultCoreSettings.otpRetentionSeconds),
  TOPUP_COOLDOWN_SECONDS: seconds(defaultCoreSettings.topupCooldownSeconds),
  WITHDRAW_COOLDOWN_SECONDS: seconds(defaultCoreSettings.withdrawCooldownSeconds),
  /** Days an approved card authorization stays held uncleared before it is released (`Reversed`). */
  AUTHORIZATION_HOLD_DAYS: z.coerce.number().int().min(1).max(90).default(defaultCoreSettings.authorizationHoldDays),
  ADMIN_CHAT_ID: z.coerce.number().int().optional(),
  /** Telegram user ids (comma-separated) who may decide deposit requests and read /stats in the admins' chat. */
  ADMIN_USER_IDS: z
    .string()
    .regex(/^\d{1,16}(\s*,\s*\d{1,16})*$/, { error: 'Telegram user ids separated by commas, e.g. 12345,67890' })
    .optional()
    .transform((value) => (value === undefined ? [] : value.split(',').map((id) => Number(id.trim())))),
  /** Telegram Payments: the provider token from @BotFather; set, cardholders may also pay into their wallet by invoice. */
  PAYMENT_PROVIDER_TOKEN: z
    .string()
    .regex(/^\S{1,256}$/, { error: 'the provider token from @BotFather (Payments), without spaces' })
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Unset: `keys/card-data.key`, or an older install's `data/card-data.key` (see `cardDataKeyLocation`). */
  CARD_DATA_KEY_FILE: z.string().min(1).optional(),
  SANDBOX_ASYNC_ISSUE: flag.default(false),
  /** A card-provider call not answered after this long is given up as a provider failure. */
  PROVIDER_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(PROVIDER_TIMEOUT_MAX_MS, {
      error: `at most ${PROVIDER_TIMEOUT_MAX_MS} (below the 30 s a freeze holds its card and the 60 s after which a pending operation is settled as failed)`,
    })
    .default(PROVIDER_TIMEOUT_DEFAULT_MS),
  /** Who issues the cards: the embedded sandbox (needs nothing) or Lithic (needs `LITHIC_API_KEY`; docs/lithic.md). */
  CARD_PROVIDER: z.enum(['sandbox', 'lithic']).default('sandbox'),
  /** Lithic: the API key (sent as its `Authorization` header; never logged). */
  LITHIC_API_KEY: z
    .string()
    .regex(/^\S{8,256}$/, { error: "the API key from Lithic's dashboard, without spaces" })
    .optional(),
  /** Lithic: the API's root, its sandbox unless set (https://api.lithic.com to go live). */
  LITHIC_API_URL: z
    .url({ protocol: /^https?$/, error: 'an http:// or https:// URL' })
    .refine((url) => !url.endsWith('/') && !url.includes('?') && !url.includes('#'), {
      error: 'the root the adapter adds /v1/… to, without a trailing / (e.g. https://sandbox.lithic.com)',
    })
    .refine((url) => !url.startsWith('http:') || isLoopbackUrl(url), {
      error: 'plain http:// would send the API key and card numbers unencrypted: use https:// (http:// only on this machine)',
    })
    .default('https://sandbox.lithic.com'),
  /** Lithic: the Auth Stream Access secret that signs each authorization request (`X-Lithic-HMAC`). */
  LITHIC_ASA_SECRET: z
    .string()
    .regex(/^\S{8,512}$/, { error: 'the ASA secret from Lithic, without spaces' })
    .optional(),
  /** Lithic: the event subscription's signing secret (Standard Webhooks, `whsec_…`). */
  LITHIC_WEBHOOK_SECRET: z
    .string()
    .regex(/^\S{8,512}$/, { error: 'the event subscription secret from Lithic, without spaces' })
    .optional(),
});

type ParsedConfig = z.output<typeof configSchema>;
/**
 * The settings, checked. `BOT_MODE` tells the two ways the bot gets its updates apart: webhook mode always
 * has its URL and secret.
 */
export type Config = Omit<ParsedConfig, 'BOT_MODE' | 'WEBHOOK_URL' | 'WEBHOOK_SECRET'> &
  (
    | { BOT_MODE: 'polling'; WEBHOOK_URL?: string; WEBHOOK_SECRET?: string }
    | { BOT_MODE: 'webhook'; WEBHOOK_URL: string; WEBHOOK_SECRET: string }
  );

/**
 * Every setting's name. The environment examples (`.env.example`, `deploy/*.env`) and the README's table name
 * only these: the parser drops a name it does not know without a word, so a misspelt one would silently not apply.
 */
export const SETTING_NAMES: readonly string[] = Object.keys(configSchema.shape);

/** `HTTP_TRUST_PROXY` as Fastify's `trustProxy` option takes it: a hop count, or the proxies' addresses. */
function trustProxyOption(value: string | undefined): false | number | string[] {
  if (value === undefined || value === 'false') return false;
  if (/^[1-9]$/.test(value)) return Number(value);
  return value.split(',').map((part) => part.trim());
}

/** Whether a URL's host is this machine: 127.0.0.0/8, localhost or [::1]. */
function isLoopbackUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const host = new URL(value).hostname;
  return host === 'localhost' || host === '[::1]' || (isIP(host) === 4 && host.startsWith('127.'));
}

/** An IPv4 or IPv6 address, with or without a `/bits` prefix length: `10.0.0.0/8`, `::1`. */
function isAddressOrCidr(part: string): boolean {
  const [address = '', bits, ...rest] = part.trim().split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}

/** Telegram opens Mini Apps over HTTPS only; plain http is for a page on this machine (tests). Telegram adds the fragment. */
function isWebAppUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  const local = url.hostname === '127.0.0.1' || url.hostname === 'localhost';
  return (url.protocol === 'https:' || (url.protocol === 'http:' && local)) && url.hash === '';
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/** Settings that hold a secret, which may come from a file instead (`<NAME>_FILE`: Docker secrets, systemd credentials). */
export const SECRET_SETTINGS = [
  'BOT_TOKEN',
  'WEBHOOK_SECRET',
  'PAYMENT_PROVIDER_TOKEN',
  'DATABASE_URL',
  'REDIS_URL',
  'LITHIC_API_KEY',
  'LITHIC_ASA_SECRET',
  'LITHIC_WEBHOOK_SECRET',
] as const;

/**
 * Each `<NAME>_FILE` of a secret setting read into `<NAME>` (its content, without the trailing newline an
 * editor adds). Both set is refused (which one is meant?); a file that cannot be read is refused, naming
 * the setting and the file, never the content.
 */
function withSecretFiles(env: Record<string, string | undefined>): Record<string, string | undefined> {
  const out = { ...env };
  for (const name of SECRET_SETTINGS) {
    const file = env[`${name}_FILE`];
    delete out[`${name}_FILE`];
    if (file === undefined) continue;
    if (env[name] !== undefined) throw new ConfigError(`${name} and ${name}_FILE are both set: set one of them`);
    try {
      out[name] = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      throw new ConfigError(`${name}_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  return out;
}

/** Reads and checks the settings once, at start; a bad one stops the start with a clear message. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = withSecretFiles(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '')));
  const result = configSchema.safeParse(present);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid settings:\n${lines.join('\n')}`);
  }
  const parsed = result.data;
  const { BOT_MODE, WEBHOOK_URL, WEBHOOK_SECRET } = parsed;
  if (BOT_MODE === 'webhook' && (!WEBHOOK_URL || !WEBHOOK_SECRET)) {
    throw new ConfigError('BOT_MODE=webhook needs WEBHOOK_URL and WEBHOOK_SECRET');
  }
  const config = parsed as Config;
  if (config.CARD_SERVICE_URL !== undefined && config.PAYMENT_PROVIDER_TOKEN !== undefined) {
    throw new ConfigError(
      'PAYMENT_PROVIDER_TOKEN credits the embedded wallet, which remote mode (CARD_SERVICE_URL) has not: unset one of them',
    );
  }
  if (config.CARD_PROVIDER === 'lithic' && config.LITHIC_API_KEY === undefined) {
    throw new ConfigError("CARD_PROVIDER=lithic needs LITHIC_API_KEY (or LITHIC_API_KEY_FILE): the API key from Lithic's dashboard");
  }
  if (config.CARD_PROVIDER === 'lithic' && config.CARD_SERVICE_URL !== undefined) {
    throw new ConfigError(
      'CARD_PROVIDER=lithic issues cards from the embedded core, which remote mode (CARD_SERVICE_URL) has not: unset one of them',
    );
  }
  if (config.HTTP_ENABLED && config.METRICS_PORT !== undefined && config.METRICS_PORT !== 0 && config.METRICS_PORT === config.HTTP_PORT) {
    throw new ConfigError(
      `METRICS_PORT=${config.METRICS_PORT} is HTTP_PORT as well: the metrics have a listener of their own, set METRICS_PORT to another port`,
    );
  }
  if (config.BOT_ENABLED && config.BOT_MODE === 'webhook' && !config.HTTP_ENABLED) {
    throw new ConfigError('BOT_MODE=webhook is served by the HTTP server: set HTTP_ENABLED=true');
  }
  return config;
}

/** The bot needs a token; say where to get one. */
export function requireBotToken(config: Config): string {
  if (!config.BOT_TOKEN) {
    throw new ConfigError('BOT_TOKEN is missing: create a bot with @BotFather in Telegram, then put its token in .env as BOT_TOKEN=…');
  }
  return config.BOT_TOKEN;
}
