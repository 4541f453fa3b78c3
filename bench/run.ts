import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Runs every `bench/*.bench.ts` in turn (or those whose name contains an argument).
// Each prints its figures as ratios against a baseline measured in the same run.
// Ctrl-C ends the run through `exit`, so a bench's `exit` listeners stop the processes it started.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
const folder = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(folder)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();
for (const file of files) {
  console.log(`\n## ${file}`);
  const mod = (await import(pathToFileURL(path.join(folder, file)).href)) as { default: () => Promise<void> };
  await mod.default();
}
