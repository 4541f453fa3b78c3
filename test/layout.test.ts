import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// The layout as a check (docs/architecture.md): which folders of src/ may import which. The bot reaching the
// core only through its port is test/bot/seam.test.ts.

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'src');

/** Every relative module specifier a file names: `import`, `import type`, `export … from` and `import()`. */
function specifiersOf(source: string): string[] {
  return [...source.matchAll(/\b(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1]!);
}

/** The top folder of src/ a path is in (`core`, `infra`, …), or `.` for the entry points at its top. */
function folderOf(file: string): string {
  const parts = path.relative(src, file).split(path.sep);
  return parts.length === 1 ? '.' : parts[0]!;
}

/** Each import that crosses from one folder of src/ to another: `[importer, imported folder, specifier]`. */
function crossings(): [string, string, string][] {
  const found: [string, string, string][] = [];
  for (const file of readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
    const full = path.join(src, file);
    for (const specifier of specifiersOf(readFileSync(full, 'utf8'))) {
      const target = path.resolve(path.dirname(full), specifier);
      if (folderOf(target) !== folderOf(full)) found.push([path.relative(root, full), folderOf(target), specifier]);
    }
  }
  return found;
}

/** Entry points (a process's main) may import the composition root wherever they are. */
const isEntryPoint = (file: string) => /(^|\/)(main|api-main|cli|[a-z-]+-cli)\.ts$/.test(file);

/** Folders every folder may import: the interface's objects (src/interface), which belong to no side. */
const SHARED = ['interface'];

const MAY_IMPORT: Record<string, string[]> = {
  // The interface's objects: what the spec promises, declared once for every side, so they import nothing of ours.
  interface: [],
  // Infrastructure knows no domain.
  infra: [],
  // The database layer: its own dialect and migrations' types, over infrastructure.
  db: ['infra'],
  // The core: rules and operations over the database, never an edge (the bot, the API, the CLI, remote mode, the app).
  core: ['db', 'infra'],
  // The HTTP API: the core's HTTP face, never the bot (the Mini App's bot side is passed in by the composition root),
  // nor the app (the settings it reads are its own type, which the app's settings fit).
  api: ['core', 'db', 'infra'],
  // Remote mode's client of another service: it reads refusals as the core's and records what it finds in the core's outbox.
  remote: ['core', 'db', 'infra'],
  // The bot: its own tables over the database; the core and remote mode only through src/bot/card-service (test/bot/seam.test.ts).
  bot: ['core', 'db', 'infra', 'remote'],
  // The admin command line: the core's operator operations, opened as the app opens the core (src/app/compose.ts).
  admin: ['app', 'core', 'infra'],
  // The composition root: it wires every part, and nothing but the entry points and the admin command line imports it.
  app: ['api', 'bot', 'core', 'db', 'infra', 'remote'],
};

test('every folder of src/ has an import rule', () => {
  const folders = readdirSync(src, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);
  assert.deepEqual(
    folders.filter((folder) => !(folder in MAY_IMPORT)),
    [],
  );
});

test('nothing imports the composition root but the entry points and the admin command line', () => {
  const offenders = crossings()
    .filter(([file, to]) => to === 'app' && !file.startsWith('src/admin/') && !isEntryPoint(file))
    .map(([file, , specifier]) => `${file} → ${specifier}`);
  assert.deepEqual(offenders, []);
});

for (const [folder, allowed] of Object.entries(MAY_IMPORT)) {
  test(`src/${folder} imports nothing outside ${allowed.length === 0 ? 'itself' : `itself and ${allowed.map((a) => `src/${a}`).join(', ')}`}`, () => {
    const offenders = crossings()
      .filter(([file, to]) => file.startsWith(`src/${folder}/`) && !allowed.includes(to) && !SHARED.includes(to) && !isEntryPoint(file))
      .map(([file, , specifier]) => `${file} → ${specifier}`);
    assert.deepEqual(offenders, []);
  });
}

test('the layout check sees a crossing', () => {
  assert.deepEqual(specifiersOf("import type { A } from '../core/a.js';\nconst b = await import('../../api/b.js');"), [
    '../core/a.js',
    '../../api/b.js',
  ]);
  assert.equal(folderOf(path.join(src, 'core/rules/rules.ts')), 'core');
  assert.equal(folderOf(path.join(src, 'main.ts')), '.');
});
