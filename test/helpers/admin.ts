import { runAdmin } from '../../src/admin/run.js';
import type { TestCore } from './core.js';

/** What an admin command printed and returned. */
export interface AdminRun {
  code: number;
  out: string;
  err: string;
  json(): Record<string, any>;
}

/**
 * The admin command line against a test core (`core()` as it is when the command runs), in process; the
 * runner's close is kept from closing the core.
 *
 * @example
 * const admin = adminCommands(() => t);
 * const { code, out } = await admin('users', 'list');
 */
export function adminCommands(core: () => TestCore): (...argv: string[]) => Promise<AdminRun> {
  return async (...argv) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAdmin(argv, async () => ({ ...core(), close: async () => {} }), {
      out: (s) => out.push(s),
      err: (s) => err.push(s),
    });
    return { code, out: out.join('\n'), err: err.join('\n'), json: () => JSON.parse(out.join('\n')) as Record<string, any> };
  };
}
