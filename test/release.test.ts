import assert from 'node:assert/strict';
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort } from './helpers/processes.js';

// The release as the Dockerfile makes it, by the same script (scripts/release-install.sh): compiled in a
// copy of the tree, then installed with production dependencies only and started with `npm run api`, as an
// operator would. On Node 20 better-sqlite3 12 is built from source by its install script (here from the
// binary the repository's `npm ci` built: `localPrebuild`); from Node 22 on (the image's Node 24) nothing builds. The image's `npm ci` of every dependency is the repository's own install
// of the same lock file (node_modules linked in). CI runs this on Node 20 and on Node 24.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** Node 22 and later load better-sqlite3 13 (src/db/better-sqlite3.ts), whose binaries come in its package. */
const PREBUILT_DRIVER = Number(process.versions.node.split('.')[0]) >= 22;
/** What the Dockerfile's build stage copies in (besides node_modules). */
const TREE = ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts', 'src', 'migrations', 'locales'];

/** The environment without a parent `npm test`'s npm_* settings; HOME stays for the npm cache and config. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.toLowerCase().startsWith('npm_')) env[key] = value;
  for (const key of ['DATABASE_URL', 'CARD_DATA_KEY_FILE', 'BOT_TOKEN', 'HTTP_PORT', 'HTTP_HOST', 'NODE_OPTIONS', 'TEST_DATABASE_URL'])
    delete env[key];
  return { ...env, ...extra };
}

/**
 * On Node 20 the runtime step's install script compiles better-sqlite3 12 (prebuild-install finds no binary
 * to download here, then node-gyp builds), which the repository's own `npm ci` has just done for the same
 * version: 2-3 minutes of CI twice over. This hands that binary to prebuild-install as a local prebuild
 * (its `local-prebuilds` setting, under the name it would download), so the install script still runs
 * and unpacks and loads the binary, and nothing is compiled a second time.
 */
function localPrebuild(dir: string): Record<string, string> {
  const driver = path.join(ROOT, 'node_modules/better-sqlite3');
  const { version } = JSON.parse(readFileSync(path.join(driver, 'package.json'), 'utf8')) as { version: string };
  const folder = path.join(dir, 'prebuilds');
  mkdirSync(folder, { recursive: true });
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  run(driver, 'tar', ['czf', path.join(folder, name), 'build/Release/better_sqlite3.node']);
  return { npm_config_better_sqlite3_local_prebuilds: folder };
}

function run(cwd: string, command: string, args: string[], env = cleanEnv()): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  assert.equal(result.status, 0, `${command} ${args.join(' ')} in ${cwd} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
  return result;
}

describe('the release (Dockerfile steps: scripts/release-install.sh)', { timeout: 600_000 }, () => {
  let dir: string;
  let release: string;
  let data: string;
  const runtimeEnv = (extra: Record<string, string> = {}) =>
    cleanEnv({
      DATABASE_URL: path.join(data, 'cards.db'),
      CARD_DATA_KEY_FILE: path.join(dir, 'keys', 'card-data.key'),
      LOG_LEVEL: 'info',
      ...extra,
    });

  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'release-'));
    const build = path.join(dir, 'build');
    release = path.join(dir, 'release');
    data = path.join(dir, 'data');
    mkdirSync(data);
    for (const entry of TREE) cpSync(path.join(ROOT, entry), path.join(build, entry), { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(build, 'node_modules'), 'dir');
    run(build, 'sh', ['scripts/release-install.sh', 'build', release]);
    run(release, 'sh', ['scripts/release-install.sh', 'runtime'], cleanEnv(PREBUILT_DRIVER ? {} : localPrebuild(dir)));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('holds the compiled code, migrations as .js only, the locales, and no tsc, tsx nor sources', () => {
    assert.ok(existsSync(path.join(release, 'dist/src/main.js')));
    const migrations = readdirSync(path.join(release, 'dist/migrations'));
    assert.deepEqual(migrations.map((name) => name.replace(/\.js$/, '.ts')).sort(), readdirSync(path.join(ROOT, 'migrations')).sort());
    assert.ok(readdirSync(path.join(release, 'locales')).includes('en.ftl'));
    for (const dev of ['typescript', 'tsx', 'esbuild', '.bin/tsc', '.bin/tsx']) {
      assert.ok(!existsSync(path.join(release, 'node_modules', dev)), `${dev} is not installed`);
    }
    assert.ok(!existsSync(path.join(release, 'src')));
  });

  it(`has the SQLite driver this Node loads, ${PREBUILT_DRIVER ? 'with nothing built (no compiler needed)' : 'put in place by its install script'}`, () => {
    const built = existsSync(path.join(release, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node'));
    // That it loads, `npm run api` below shows.
    assert.equal(built, !PREBUILT_DRIVER, 'better-sqlite3 12 is built where it is loaded, and only there');
  });

  it('`npm run api` serves /livez, `npm run admin` works beside it, SIGTERM exits 0', async () => {
    const port = await freePort();
    const api = spawn('npm', ['run', 'api'], {
      cwd: release,
      env: runtimeEnv({ HTTP_PORT: String(port) }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    api.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    api.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => api.once('exit', (code) => resolve(code)));
    try {
      let status = 0;
      for (const deadline = Date.now() + 30_000; Date.now() < deadline && status !== 200; ) {
        status = await fetch(`http://127.0.0.1:${port}/livez`).then(
          (r) => r.status,
          () => 0,
        );
        if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.equal(status, 200, `no /livez answer; output:\n${output}`);
      assert.doesNotMatch(output, /building|warning/, 'a built release starts without building');

      const admin = run(release, 'npm', ['run', '--silent', 'admin', '--', 'users', 'list', '--json'], runtimeEnv({ LOG_LEVEL: 'warn' }));
      // `npm run -s` prints no banner: standard output is the one JSON object, ready for jq.
      assert.deepEqual(JSON.parse(admin.stdout), { ok: true, users: [] });
      const version = run(release, 'npm', ['run', '--silent', 'admin', '--', '--version'], runtimeEnv({ LOG_LEVEL: 'warn' }));
      assert.equal(version.stdout.trim(), JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version);
    } finally {
      // To npm, as a terminal or a supervisor would: the scripts `exec` node, so npm hands the signal on.
      api.kill('SIGTERM');
    }
    const stopped = await Promise.race([exited, new Promise<'timeout'>((resolve) => setTimeout(resolve, 20_000, 'timeout'))]);
    if (stopped === 'timeout') process.kill(-api.pid!, 'SIGKILL'); // the whole group: nothing outlives the test
    assert.equal(stopped, 0, `exit code after SIGTERM; output:\n${output}`);
    assert.match(output, /"msg":"Stopped"/);
  });

  it('runs dist/ with a warning when sources newer than it are present but tsc is not; reads only .js migrations', () => {
    mkdirSync(path.join(release, 'src'));
    writeFileSync(path.join(release, 'src', 'edited.ts'), 'export {};\n');
    // Files of another kind beside the compiled migrations are not migrations (plain node cannot import a .ts).
    const strays = ['29991231_99_stray.ts', '29991231_99_stray.d.ts', '29991231_99_stray.js.map'].map((name) =>
      path.join(release, 'dist/migrations', name),
    );
    for (const stray of strays) writeFileSync(stray, 'export async function up() { throw new Error("not a migration"); }\n');
    try {
      const migrate = run(release, 'npm', ['run', '--silent', 'migrate'], runtimeEnv());
      assert.match(migrate.stderr, /warning: src\/edited\.ts is newer than dist\/, but typescript is not installed/);
      assert.match(migrate.stdout, /Database is up to date\./);
    } finally {
      rmSync(path.join(release, 'src'), { recursive: true, force: true });
      for (const stray of strays) rmSync(stray, { force: true });
    }
  });
});
