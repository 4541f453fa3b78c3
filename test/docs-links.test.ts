import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DOCUMENTS = [
  'README.md',
  'SECURITY.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The text outside code blocks (fenced or indented). */
function outsideCodeBlocks(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/^(?: {4}|\t).*$/gm, '');
}

/** The text outside code: blocks, and `inline code` too, never hold links. */
const prose = (markdown: string) => outsideCodeBlocks(markdown).replace(/`[^`\n]*`/g, '');

/** Every `[text](target)` link's target (images too), without its title. */
function linksIn(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(\s*([^)\s]+)(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!);
}

/** The anchors GitHub gives a file's headings (lower case, punctuation dropped, spaces as dashes, repeats numbered) and its `<a id>`s. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of outsideCodeBlocks(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = heading!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    const slug = text
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const repeats = seen.get(slug) ?? 0;
    seen.set(slug, repeats + 1);
    anchors.add(repeats === 0 ? slug : `${slug}-${repeats}`);
  }
  for (const [, id] of prose(markdown).matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(id!);
  return anchors;
}

/** Why `target`, linked from `document`, leads nowhere; undefined when it resolves. */
function brokenLink(document: string, target: string): string | undefined {
  const [file = '', anchor] = target.split('#');
  const resolved = file === '' ? path.join(ROOT, document) : path.resolve(path.dirname(path.join(ROOT, document)), decodeURI(file));
  if (!resolved.startsWith(ROOT + path.sep)) return 'outside the repository';
  if (!existsSync(resolved)) return 'no such file';
  if (anchor === undefined || !resolved.endsWith('.md')) return undefined;
  return anchorsOf(readFileSync(resolved, 'utf8')).has(decodeURIComponent(anchor)) ? undefined : 'no such heading';
}

describe('documentation links', () => {
  it('reads the links and anchors it checks', () => {
    assert.deepEqual(linksIn('See [a](docs/a.md#x "title"), `[no](code.md)`, ![img](pic.png) and [web](https://x.org).'), [
      'docs/a.md#x',
      'pic.png',
      'https://x.org',
    ]);
    assert.deepEqual(
      [...anchorsOf('# Top\n## Group commit (SQLite)\n## `--json` and [links](x.md)\n## Top\n    # not a heading\n')],
      ['top', 'group-commit-sqlite', '--json-and-links', 'top-1'],
    );
  });

  for (const document of DOCUMENTS) {
    it(`every relative link in ${document} leads to a file, and to a heading when it names one`, () => {
      const broken = linksIn(readFileSync(path.join(ROOT, document), 'utf8'))
        .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target))
        .map((target) => [target, brokenLink(document, target)] as const)
        .filter(([, why]) => why !== undefined)
        .map(([target, why]) => `${target}: ${why}`);
      assert.deepEqual(broken, []);
    });
  }
});
