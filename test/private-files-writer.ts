// One of several processes creating the same files at once: spawned by private-files.test.ts. Each
// file is created once by whichever process gets there first; every process then reads it whole.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createPrivateFileOnce } from '../src/infra/private-files.js';

const [folder, count] = process.argv.slice(2) as [string, string];
console.log('ready');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
let created = 0;
let torn = 0;
for (let i = 0; i < Number(count); i++) {
  const file = path.join(folder, `key-${i}`);
  if (createPrivateFileOnce(file, `${randomBytes(32).toString('base64')}\n`)) created += 1;
  if (!/^[A-Za-z0-9+/]{43}=\n$/.test(readFileSync(file, 'utf8'))) torn += 1;
}
console.log(JSON.stringify({ created, torn }));
