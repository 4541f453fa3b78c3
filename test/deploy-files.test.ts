import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseEnv } from 'node:util';
import { parse } from 'yaml';
import { cardDataKeyLocation } from '../src/app/card-data-key-location.js';
import { loadConfig, SECRET_SETTINGS, SETTING_NAMES, type Config } from '../src/app/config.js';
import { parseDatabaseUrl } from '../src/db/database.js';

// The deployment files as an operator gets them: no working default for a password, ports on the
// loopback only (TLS goes in front), the card-data key in a folder apart from the database, and an
// environment example per way of running whose paths that way can write and whose host it can reach.
// There is no Docker nor systemd here: compose.yaml is read as `docker compose config` would interpolate
// it, and each example goes through the real settings parser with the environment its way gives it.

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

/** Compose's interpolation: `${X}`, `${X:-default}`, `${X-default}`, `${X:?error}`, `${X?error}`, `$$`. */
function interpolate(text: string, env: Record<string, string>): string {
  return text.replace(
    /\$\$|\$\{([A-Z_][A-Z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g,
    (whole, name?: string, colon?: string, kind?: string, word?: string) => {
      if (whole === '$$') return '$';
      const value = env[name!];
      const unset = value === undefined || (colon === ':' && value === '');
      if (!unset) return value;
      if (kind === '?') throw new Error(`required variable ${name} is missing a value: ${word}`);
      return kind === '-' ? word! : '';
    },
  );
}

interface Service {
  stop_grace_period?: string;
  env_file?: { path: string }[];
  environment?: Record<string, string>;
  command?: string[];
  ports?: string[];
  volumes?: string[];
}

function composeWith(env: Record<string, string>): { services: Record<string, Service> } {
  return parse(interpolate(read('compose.yaml'), env), { merge: true }) as { services: Record<string, Service> };
}

const secrets = { POSTGRES_PASSWORD: 'pg0secret0from0env', REDIS_PASSWORD: 'redis0secret0from0env' };

describe('compose.yaml', () => {
  test('stops with a clear message, not a default password, when POSTGRES_PASSWORD or REDIS_PASSWORD is not set', () => {
    assert.throws(() => composeWith({ REDIS_PASSWORD: secrets.REDIS_PASSWORD }), /POSTGRES_PASSWORD.*set POSTGRES_PASSWORD in \.env/);
    assert.throws(() => composeWith({ POSTGRES_PASSWORD: secrets.POSTGRES_PASSWORD }), /REDIS_PASSWORD.*set REDIS_PASSWORD in \.env/);
    assert.throws(() => composeWith({ ...secrets, POSTGRES_PASSWORD: '' }), /POSTGRES_PASSWORD/, 'an empty one is no password either');
  });

  test('Postgres and Redis take their passwords from .env, and every instance connects with them', () => {
    const { services } = composeWith(secrets);
    assert.equal(services.postgres?.environment?.POSTGRES_PASSWORD, secrets.POSTGRES_PASSWORD);
    const command = services.redis?.command ?? [];
    assert.equal(command[command.indexOf('--requirepass') + 1], secrets.REDIS_PASSWORD);
    for (const name of ['bot', 'api2']) {
      const environment = services[name]?.environment ?? {};
      assert.equal(environment.DATABASE_URL, `postgres://cards:${secrets.POSTGRES_PASSWORD}@postgres:5432/cards`, name);
      assert.equal(environment.REDIS_URL, `redis://:${secrets.REDIS_PASSWORD}@redis:6379/0`, name);
    }
    assert.doesNotMatch(read('compose.yaml'), /cards:cards@|POSTGRES_PASSWORD: cards/);
  });

  test("gives each service's shutdown longer than the service itself takes (15 s) before docker kills it", () => {
    for (const name of ['bot', 'api2']) {
      const grace = composeWith(secrets).services[name]!.stop_grace_period;
      assert.match(grace ?? '', /^\d+s$/, name);
      assert.ok(Number.parseInt(grace!, 10) > 15, `${name}: ${grace}`);
    }
  });

  test('publishes ports on 127.0.0.1 only', () => {
    const ports = Object.values(composeWith(secrets).services).flatMap((s) => s.ports ?? []);
    assert.ok(ports.length > 0);
    for (const port of ports) assert.match(port, /^127\.0\.0\.1:/);
  });

  test('keeps the card-data key in a volume of its own, apart from any database', () => {
    for (const name of ['bot', 'api2']) {
      const service = composeWith(secrets).services[name]!;
      assert.ok(service.volumes?.includes('cards-keys:/app/keys'), name);
      // Unset, so the image's default (/app/keys) applies and an older install's /app/data key is still found.
      assert.equal(service.environment?.CARD_DATA_KEY_FILE, undefined, name);
    }
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');

  test('its example publishes on 127.0.0.1, and says TLS goes in front', () => {
    const run = dockerfile.split('\n').find((line) => line.includes('docker run'));
    assert.match(run ?? '', / -p 127\.0\.0\.1:3000:3000 /);
    assert.match(dockerfile, /TLS goes in front/);
  });

  test('every stage is Node 24 LTS, with no compiler (its SQLite driver is prebuilt), and CI runs the suite on that Node', () => {
    const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    assert.ok(bases.length > 0);
    for (const base of bases) assert.equal(base, 'node:24-bookworm-slim');
    assert.doesNotMatch(dockerfile, /apt-get|g\+\+|python3/);
    assert.match(read('.ci/run'), /npm pack -q "node-\$\(node -p 'process\.platform'\)-\$\(node -p 'process\.arch'\)@24"/);
  });

  test('the key has a volume of its own, and no setting puts it beside the database', () => {
    assert.match(dockerfile, /^VOLUME \["\/app\/data", "\/app\/keys"\]$/m);
    assert.doesNotMatch(dockerfile, /CARD_DATA_KEY_FILE=\/app\/data/);
  });
});

describe('deploy/cards-bot.service', () => {
  const unit = read('deploy/cards-bot.service');
  const setting = (name: string) => unit.match(new RegExp(`^Environment=${name}=(.+)$`, 'm'))?.[1];

  test('the key is in a state folder of its own, apart from the database, and writable for a rotation', () => {
    const database = setting('DATABASE_URL')!;
    const key = setting('CARD_DATA_KEY_FILE')!;
    assert.notEqual(path.dirname(key), path.dirname(database));
    assert.ok(!path.dirname(key).startsWith(`${path.dirname(database)}/`));
    const state = unit.match(/^StateDirectory=(.+)$/m)?.[1]?.split(/\s+/) ?? [];
    const writable = unit.match(/^ReadWritePaths=(.+)$/m)?.[1]?.split(/\s+/) ?? [];
    for (const folder of [path.dirname(database), path.dirname(key)]) {
      assert.ok(state.map((s) => `/var/lib/${s}`).includes(folder), folder);
      assert.ok(writable.includes(folder), folder);
    }
  });
});

/**
 * An example's settings. Node's `.env` reader (`npm start`), docker's `--env-file` (each line literally),
 * compose's `env_file` and systemd's `EnvironmentFile` each read a file their own way; on plain
 * `NAME=value` lines, without quotes, `$`, `#` or spaces in the value, they all read the same.
 */
function example(file: string): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const line of read(file).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const [, name, value] = /^([A-Z][A-Z0-9_]*)=([^\s"'`$#\\]*)$/.exec(line) ?? [];
    assert.ok(name !== undefined && value !== undefined, `${file}: "${line}" is not a plain NAME=value line`);
    assert.ok(!(name in settings), `${file}: ${name} is set twice`);
    settings[name] = value;
  }
  assert.deepEqual(parseEnv(read(file)), settings, `${file}: Node reads it the same`);
  return settings;
}

const BOT_TOKEN = '123456:filled-in-by-the-operator';
/** Names a setting may have: the parser's, and `<NAME>_FILE` for a secret. */
const SETTINGS = new Set([...SETTING_NAMES, ...SECRET_SETTINGS.map((name) => `${name}_FILE`)]);
/** What compose.yaml itself reads from `.env` (`${NAME…}`), besides the settings. */
const COMPOSE_VARIABLES = new Set([...read('compose.yaml').matchAll(/\$\{([A-Z_][A-Z0-9_]*)/g)].map((m) => m[1]!));

/** `file` is `folder` or inside it, both absolute. */
const isUnder = (file: string, folder: string) => file === folder || file.startsWith(`${folder}/`);
const isLoopback = (host: string) => host === 'localhost' || host === '::1' || host.startsWith('127.');

/** Where the settings put the SQLite database and the card-data key, absolute, for a process started in `cwd`. */
function filesOf(config: Config, cwd: string): { database: string | undefined; key: string } {
  const target = parseDatabaseUrl(config.DATABASE_URL);
  return {
    database: target.kind === 'sqlite' ? path.resolve(cwd, target.file) : undefined,
    key: cardDataKeyLocation(config.CARD_DATA_KEY_FILE, config.DATABASE_URL, cwd).file,
  };
}

/** The image's last stage: its environment, working folder and volumes. */
function image(): { env: Record<string, string>; workdir: string; volumes: string[] } {
  const stage = read('Dockerfile')
    .split(/^FROM /m)
    .at(-1)!
    .replace(/\\\n\s*/g, ' ');
  const env: Record<string, string> = {};
  for (const [, list] of stage.matchAll(/^ENV (.+)$/gm)) {
    for (const pair of list!.trim().split(/\s+/)) env[pair.slice(0, pair.indexOf('='))] = pair.slice(pair.indexOf('=') + 1);
  }
  return { env, workdir: stage.match(/^WORKDIR (.+)$/m)![1]!, volumes: JSON.parse(stage.match(/^VOLUME (.+)$/m)![1]!) };
}

/** The systemd unit's `Key=` lines, every one of them (`Environment=` comes several times). */
const unitLines = (text: string, key: string) => [...text.matchAll(new RegExp(`^${key}=(.+)$`, 'gm'))].map((m) => m[1]!);

describe('the environment examples, each read as its way of running reads it', () => {
  test(".env.example lists every setting, and the README's settings table names exactly the parser's settings", () => {
    assert.deepEqual(Object.keys(example('.env.example')).sort(), [...SETTING_NAMES].sort());
    const table = settingsTable();
    assert.deepEqual([...table].filter((name) => name !== '<NAME>_FILE').sort(), [...SETTING_NAMES].sort());
    assert.ok(table.has('<NAME>_FILE'), 'the table says which settings may come from a file');
  });

  test("every name in every example is a setting (or, in the container's, a variable of compose.yaml)", () => {
    for (const file of ['.env.example', 'deploy/systemd.env', 'deploy/container.env']) {
      const known = file === 'deploy/container.env' ? new Set([...SETTINGS, ...COMPOSE_VARIABLES]) : SETTINGS;
      for (const name of Object.keys(example(file))) assert.ok(known.has(name), `${file}: ${name} is not a setting`);
    }
  });

  test('from a clone (`npm start`): the database and the key under the clone, the API on this machine only', () => {
    const clone = '/home/someone/cards-bot';
    const config = loadConfig({ ...example('.env.example'), BOT_TOKEN });
    const { database, key } = filesOf(config, clone);
    assert.equal(database, `${clone}/data/cards.db`);
    assert.equal(key, `${clone}/keys/card-data.key`);
    assert.ok(isLoopback(config.HTTP_HOST), config.HTTP_HOST);
  });

  test('`docker run --env-file`: the database and the key in the volumes, listening where a published port arrives', () => {
    const { env, workdir, volumes } = image();
    const config = loadConfig({ ...env, ...example('deploy/container.env'), BOT_TOKEN });
    const { database, key } = filesOf(config, workdir);
    assert.ok(
      volumes.some((volume) => isUnder(database!, volume)),
      `${database} is not in a volume (${volumes.join(', ')})`,
    );
    assert.ok(
      volumes.some((volume) => isUnder(key, volume)),
      `${key} is not in a volume`,
    );
    assert.ok(!isLoopback(config.HTTP_HOST), `HTTP_HOST=${config.HTTP_HOST}: a published port never reaches the container's loopback`);
    const published = read('Dockerfile').match(/^#\s+docker run .* -p [\d.]+:\d+:(\d+) /m)?.[1];
    assert.equal(config.HTTP_PORT, Number(published));
    assert.match(read('Dockerfile'), /cp deploy\/container\.env \.env/);
  });

  test('compose.yaml with the example as its .env: the key in its volume, every instance reachable on its published port', () => {
    const settings = { ...example('deploy/container.env'), BOT_TOKEN, ...secrets };
    const { env, workdir } = image();
    for (const [name, service] of Object.entries(composeWith(settings).services).filter(([, s]) => s.env_file)) {
      assert.deepEqual(service.env_file, [{ path: '.env', required: false }], name);
      const config = loadConfig({ ...env, ...settings, ...service.environment });
      const { database, key } = filesOf(config, workdir);
      assert.equal(database, undefined, `${name}: on Postgres`);
      const mounts = (service.volumes ?? []).map((volume) => volume.split(':')[1]!);
      assert.ok(
        mounts.some((mount) => isUnder(key, mount)),
        `${name}: ${key} is not in a volume`,
      );
      assert.ok(!isLoopback(config.HTTP_HOST), `${name}: HTTP_HOST=${config.HTTP_HOST}`);
      for (const port of service.ports ?? []) assert.equal(port.split(':').at(-1), String(config.HTTP_PORT), name);
    }
    assert.match(read('compose.yaml'), /cp deploy\/container\.env \.env/);
  });

  test('the systemd unit with the example as its environment file: every path in its state folders, none in the read-only release', () => {
    const unit = read('deploy/cards-bot.service');
    const defaults = Object.fromEntries(unitLines(unit, 'Environment').map((pair) => pair.split(/=(.*)/s).slice(0, 2)));
    // systemd: the environment file's settings override the unit's Environment= lines.
    const config = loadConfig({ ...defaults, ...example('deploy/systemd.env'), BOT_TOKEN });
    const release = unitLines(unit, 'WorkingDirectory')[0]!;
    const state = unitLines(unit, 'StateDirectory')[0]!
      .split(/\s+/)
      .map((folder) => `/var/lib/${folder}`);
    const writable = unitLines(unit, 'ReadWritePaths')[0]!.split(/\s+/);
    const { database, key } = filesOf(config, release);
    for (const file of [database!, key]) {
      assert.ok(
        state.some((folder) => isUnder(file, folder)) && writable.some((folder) => isUnder(file, folder)),
        `${file} is not writable`,
      );
      assert.ok(!isUnder(file, release), `${file} is in the release`);
    }
    assert.match(unit, /install .*deploy\/systemd\.env \/etc\/cards-bot\.env/);
    assert.deepEqual(unitLines(unit, 'EnvironmentFile'), ['/etc/cards-bot.env']);
  });

  test("deploy/cards-admin runs the admin command line with the unit's folder, defaults and environment file", () => {
    const unit = read('deploy/cards-bot.service');
    const script = read('deploy/cards-admin');
    const property = (key: string) => [...script.matchAll(new RegExp(`-p ${key}=(\\S+)`, 'g'))].map((m) => m[1]!);
    for (const key of ['WorkingDirectory', 'Environment', 'EnvironmentFile']) assert.deepEqual(property(key), unitLines(unit, key), key);
  });
});

/** The names in the settings table (`| name | default | meaning |`), wherever the README or docs/ keep it. */
function settingsTable(): Set<string> {
  const docs = readdirSync(path.join(root, 'docs')).map((file) => `docs/${file}`);
  for (const file of ['README.md', ...docs.filter((file) => file.endsWith('.md'))]) {
    const lines = read(file).split('\n');
    const start = lines.findIndex((line) => /^\|\s*name\s*\|\s*default\s*\|\s*meaning\s*\|$/.test(line));
    if (start === -1) continue;
    const end = lines.findIndex((line, i) => i > start && !line.startsWith('|'));
    const rows = lines.slice(start + 2, end === -1 ? undefined : end);
    return new Set(rows.flatMap((row) => [...row.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)));
  }
  assert.fail('no settings table (| name | default | meaning |) in README.md or docs/');
}
