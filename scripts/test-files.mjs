// The test files for `npm run test:files`, the longest first: three run at a time, so a long file started last
// would run alone at the end. The rest follow in path order. Figures from CI's runs (2 cores, 2026-11-29).
import { readdirSync } from 'node:fs';
import path from 'node:path';

/** The files that take over 20 s each, longest first. A file not listed simply runs in path order. */
const LONGEST_FIRST = [
  'test/compose.test.ts', // ~100 s: several processes starting together
  'test/multi-instance.test.ts', // ~60-100 s: two bot and two API processes on Postgres
  'test/main.test.ts', // ~50-85 s: npm start
  'test/release.test.ts', // ~45-60 s: the Dockerfile's steps
  'test/remote/watch.test.ts', // ~40 s
  'test/bot/payment-crash.test.ts', // ~35 s
  'test/remote/bot-data-e2e.test.ts', // ~28 s
  'test/metrics-process.test.ts', // ~27 s
  'test/admin/keys.test.ts', // ~25 s
  'test/api/fuzz.test.ts', // ~23 s
];

function testFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(file);
    return entry.name.endsWith('.test.ts') ? [file] : [];
  });
}

const all = testFiles('test').sort();
const first = LONGEST_FIRST.filter((file) => all.includes(file));
process.stdout.write([...first, ...all.filter((file) => !first.includes(file))].join('\n'));
