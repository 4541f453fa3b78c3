import { parseArgs } from 'node:util';
import { AdminError } from '../core/admin.js';
import { isCardServiceError } from '../core/errors.js';
import type { CoreRuntime } from '../compose.js';
import { COMMANDS, LedgerMismatch } from './commands.js';

export interface AdminIo {
  out(text: string): void;
  err(text: string): void;
}

function usage(): string {
  return ['Usage: npm run admin -- <command> [options] [--json]', '', ...Object.values(COMMANDS).map((c) => `  ${c.usage}`)].join('\n');
}

/**
 * Runs one admin command and returns the exit code: 0 on success, 1 on a refusal, 2 on bad usage.
 * The runtime is opened only once the command line has been understood.
 */
export async function runAdmin(argv: string[], openRuntime: () => Promise<CoreRuntime>, io: AdminIo): Promise<number> {
  const words = argv.filter((a) => !a.startsWith('-')).slice(0, 2);
  const name = [words.join(' '), words[0] ?? ''].find((n) => n in COMMANDS);
  if (!name || argv.includes('--help')) {
    (name ? io.out : io.err)(usage());
    return name ? 0 : 2;
  }
  const command = COMMANDS[name]!;
  const json = argv.includes('--json');
  let parsed;
  try {
    parsed = parseArgs({
      args: argv.filter((a) => a !== '--json'),
      options: command.options,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    io.err(`${(error as Error).message}\nUsage: npm run admin -- ${command.usage}`);
    return 2;
  }
  const positionals = parsed.positionals.slice(name.split(' ').length);
  let runtime: CoreRuntime | undefined;
  try {
    runtime = await openRuntime();
    const result = await command.run(runtime, parsed.values, positionals);
    io.out(json ? JSON.stringify({ ok: true, ...result.json }) : result.human);
    return 0;
  } catch (error) {
    if (error instanceof LedgerMismatch) {
      io.out(json ? JSON.stringify({ ok: false, ...error.details }) : error.message);
      return 1;
    }
    if (error instanceof AdminError || isCardServiceError(error)) {
      io.err(json ? JSON.stringify({ ok: false, error: error.message }) : `Refused: ${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    await runtime?.close();
  }
}
