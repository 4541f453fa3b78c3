// `npm run build`: compiles src/ and migrations/ into dist/ with tsc (tsconfig.build.json).
// dist/ is emptied first, so a migration removed or renamed in the sources never lingers as .js there;
// dist/.build-stamp is written last, only after tsc succeeded: scripts/start.mjs compares the sources with it.
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
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

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = build();
}
