// `npm run build`: compiles src/ and migrations/ into dist/ with tsc (tsconfig.build.json).
// dist/ is emptied first, so a migration removed or renamed in the sources never lingers as .js there;
// dist/.build-stamp is written last, only after tsc succeeded: scripts/start.mjs compares the sources with it.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = path.join(ROOT, 'dist');
export const STAMP = path.join(DIST, '.build-stamp');

/** tsc's script, or null when typescript (a devDependency) is not installed. */
export function findTsc() {
  try {
    return createRequire(path.join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    return null;
  }
}

/** Builds dist/; returns tsc's exit code. */
export function build() {
  const tsc = findTsc();
  if (!tsc) {
    console.error('build: typescript is not installed (a devDependency: run `npm ci` without --omit=dev)');
    return 1;
  }
  rmSync(DIST, { recursive: true, force: true });
  const { status } = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
  if (status !== 0) return status ?? 1;
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  return 0;
}

/** What the build reads: a file here newer than the stamp makes dist/ stale. */
const SOURCES = ['src', 'migrations', 'tsconfig.json', 'tsconfig.build.json'];

function newestSource(file = null) {
  let newest = { mtimeMs: 0, file };
  const visit = (entry) => {
    if (!existsSync(entry)) return;
    const stat = statSync(entry);
    if (stat.isDirectory()) {
      for (const name of readdirSync(entry)) visit(path.join(entry, name));
    } else if (stat.mtimeMs > newest.mtimeMs) {
      newest = { mtimeMs: stat.mtimeMs, file: entry };
    }
  };
  for (const source of SOURCES) visit(path.join(ROOT, source));
  return newest;
}

/** Why dist/ must be (re)built, or null when it is up to date. */
export function staleness() {
  if (!existsSync(STAMP)) return 'dist/ has not been built by `npm run build`';
  const built = statSync(STAMP).mtimeMs;
  const newest = newestSource();
  return newest.mtimeMs > built ? `${path.relative(ROOT, newest.file)} is newer than dist/` : null;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = build();
}
