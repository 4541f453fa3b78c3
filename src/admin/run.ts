import { parseArgs } from 'node:util';
import { AdminError } from '../core/admin.js';
import { isCardServiceError } from '../core/errors.js';
import type { CoreRuntime } from '../compose.js';
import { COMMANDS, LedgerMismatch, type Values } from './commands.js';

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
  const json = argv.includes('--json');
  // With --json, every outcome is one JSON object on standard output.
  const refuse = (message: string, code: number, extra: Record<string, unknown> = {}) => {
    if (json) io.out(JSON.stringify({ ok: false, error: message, ...extra }));
    else io.err(code === 2 ? message : `Refused: ${message}`);
    return code;
  };
  if (!name || argv.includes('--help')) {
    if (name) {
      io.out(usage());
      return 0;
    }
    return json ? refuse('Unknown command', 2, { usage: usage() }) : refuse(usage(), 2);
  }
  const command = COMMANDS[name]!;
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv.filter((a) => a !== '--json'),
      options: command.options,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    const message = (error as Error).message;
    return json
      ? refuse(message, 2, { usage: `npm run admin -- ${command.usage}` })
      : refuse(`${message}\nUsage: npm run admin -- ${command.usage}`, 2);
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
    if (error instanceof AdminError || isCardServiceError(error)) return refuse(error.message, 1);
    throw error;
  } finally {
    await runtime?.close();
  }
}
