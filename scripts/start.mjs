// `npm start`, `npm run api|admin|migrate`: runs the compiled entry point dist/<entry>.js in this very
// process (signals and the exit code are the program's own), building dist/ first when it is missing
// or older than a source: `npm ci && npm start` works on a fresh clone.
//   node scripts/start.mjs src/main [args…]
// A production install (`npm ci --omit=dev`: no tsc) over a built tree never builds: there dist/ is
// the release (the Docker image ships no sources); if sources newer than it are present all the same,
// it runs dist/ with a warning rather than failing.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, DIST, findTsc, ROOT, staleness } from './build.mjs';

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/start.mjs <entry, e.g. src/main> [args…]');
  process.exit(2);
}
const compiled = path.join(DIST, `${entry.replace(/\.[cm]?[jt]s$/, '')}.js`);

const stale = staleness();
if (stale) {
  if (findTsc()) {
    console.error(`start: ${stale}; building…`);
    const code = build();
    if (code !== 0) process.exit(code);
  } else if (existsSync(compiled)) {
    console.error(`start: warning: ${stale}, but typescript is not installed (a production install): running dist/ as built`);
  } else {
    console.error(`start: ${stale} and typescript is not installed: run \`npm ci\` (with dev dependencies), then \`npm run build\``);
    process.exit(1);
  }
}
if (!existsSync(compiled)) {
  console.error(`start: ${path.relative(ROOT, compiled)} does not exist`);
  process.exit(1);
}
// The program sees its own argv, as if started as `node dist/<entry>.js args…`.
process.argv = [process.argv[0], compiled, ...args];
await import(pathToFileURL(compiled).href);
