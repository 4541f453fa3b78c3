import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const botFolder = path.join(root, 'src/bot');
const seam = path.join(botFolder, 'card-service');
const coreFolder = path.join(root, 'src/core');

/** Every module specifier a file names: `import`, `import type`, `export … from` and `import()`. */
function specifiersOf(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) found.push(match[1]!);
  return found;
}

test('nothing in src/bot outside src/bot/card-service imports src/core', () => {
  const offenders: string[] = [];
  const files = readdirSync(botFolder, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  assert.ok(files.length > 20, 'the bot source was found');
  for (const file of files) {
    const full = path.join(botFolder, file);
    if (full.startsWith(seam + path.sep)) continue;
    for (const specifier of specifiersOf(readFileSync(full, 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const target = path.resolve(path.dirname(full), specifier);
      if (target === coreFolder || target.startsWith(coreFolder + path.sep)) offenders.push(`${path.relative(root, full)} → ${specifier}`);
    }
  }
  assert.deepEqual(offenders, []);
});

test('the seam check sees static, type-only and dynamic imports alike', () => {
  const source = [
    "import { a } from '../core/a.js';",
    "import type { B } from '../core/b.js';",
    "export type { C } from '../core/c.js';",
    "const d = await import('../core/d.js');",
  ].join('\n');
  assert.deepEqual(specifiersOf(source), ['../core/a.js', '../core/b.js', '../core/c.js', '../core/d.js']);
});
