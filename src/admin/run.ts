import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, CommanderError } from 'commander';
import { AdminError } from '../core/admin/admin.js';
import { isCardServiceError } from '../core/rules/errors.js';
import type { CoreRuntime } from '../app/compose.js';
import { COMMANDS, FailedCheck, type Values } from './commands.js';

export interface AdminIo {
  out(text: string): void;
  err(text: string): void;
}

/**
 * How the help names the command line: `deploy/cards-admin` under the systemd unit. There is no `bin` entry; from a
 * checkout it is `npm run -s admin --`, in the image `node dist/src/admin/cli.js` (docs/admin-cli.md).
 */
export const PROGRAM = 'cards-admin';

/** The project's version, from the package.json above this file (src/admin in a checkout, dist/src/admin in a release). */
function projectVersion(): string {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'virtual-cards-bot' && pkg.version) return pkg.version;
    }
    if (path.dirname(dir) === dir) return 'unknown';
  }
}

/** What a command's usage line says of its options: required ones (outside `[...]` and `(...)`) and their value names. */
export function optionsOf(usage: string): { required: Set<string>; valueNames: Map<string, string> } {
  const required = new Set<string>();
  const valueNames = new Map<string, string>();
  let depth = 0;
  const tokens = usage.split(/\s+/);
  tokens.forEach((token, i) => {
    const opening = (token.match(/[[(]/g) ?? []).length;
    const option = /^[[(]*--([a-z0-9-]+)/.exec(token)?.[1];
    if (option !== undefined) {
      if (depth + opening === 0) required.add(option);
      const next = tokens[i + 1]?.replace(/[\])|]+$/, '');
      if (next && /^[A-Z0-9][A-Za-z0-9_|]*$/.test(next)) valueNames.set(option, next);
    }
    depth += opening - (token.match(/[\])]/g) ?? []).length;
  });
  return { required, valueNames };
}

/** The positional arguments a usage line names right after the command's words (`bins enable BIN_ID`). */
function positionalsOf(usage: string, words: number): string[] {
  const names: string[] = [];
  for (const token of usage.split(/\s+/).slice(words)) {
    if (!/^[A-Z][A-Z_]*$/.test(token)) break;
    names.push(token);
  }
  return names;
}

const camel = (name: string) => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** The option values as the commands read them, by their names in `COMMANDS` (`no-3ds`: true when given). */
function valuesFrom(options: Record<string, { type: 'string' | 'boolean' }>, parsed: Record<string, unknown>): Values {
  const values: Values = {};
  for (const name of Object.keys(options)) {
    if (name.startsWith('no-')) {
      if (parsed[camel(name.slice(3))] === false) values[name] = true;
    } else {
      const value = parsed[camel(name)];
      if (value !== undefined) values[name] = value as string | boolean;
    }
  }
  return values;
}

type Run = (name: string, values: Values, positionals: string[]) => Promise<number>;

/** What each group of commands is for: one line each in the top-level help (`test/admin/cli.test.ts` checks every group has one). */
export const GROUPS: Readonly<Record<string, string>> = {
  users: 'Cardholders: create one (with a wallet and an API token), list them, show one in full',
  tokens: "API tokens: issue another, list a user's, revoke (their chats are unlinked)",
  links: 'Telegram chats linked to tokens: list them, unlink one',
  cards: 'Cards: list them with states, balances and pending holds',
  wallet: "Wallets: fund a user's wallet",
  deposits: 'Deposit requests made in chat: list, approve, reject',
  invoices: 'Telegram Payments invoices and their charges, to reconcile with the provider',
  bins: 'BINs cards are issued from: list, add, enable, disable',
  plans: 'Card plans (limit and creation fee): list, add, deactivate',
  fees: 'Top-up platform fees per category: list, set',
  coupons: 'Coupons off the creation fee: create, list, deactivate',
  simulate: 'Sandbox events: purchases, refunds, OTPs, OTP e-mails, finished issues',
  ledger: 'The ledger: check every balance against its entries',
  keys: 'The card-data key: its file and fingerprint, rotation to a new key',
  provider: 'The card provider behind the core (CARD_PROVIDER)',
  'provider lithic': "Lithic: its status, the enrolment of this service's routes, its sandbox's simulations",
  'provider lithic simulate': "Lithic's sandbox: a purchase authorized, cleared, voided or returned, decided by this service's routes",
};

/** The command line as commander reads it: a group per first word, a command per entry of `COMMANDS`. */
function program(io: AdminIo, json: boolean, run: Run, answer: (text: string) => void): Command {
  const root = new Command(PROGRAM)
    .description('The operator command line over the service database (the same settings as the service).')
    .version(projectVersion(), '-v, --version', 'print the version')
    .option('--json', 'print one JSON object on standard output, whatever the outcome')
    .exitOverride()
    .showSuggestionAfterError()
    .configureOutput({
      // With --json the help and the version are answered as JSON instead (runAdmin).
      writeOut: (text) => (json ? answer(text.trimEnd()) : io.out(text.trimEnd())),
      // With --json a usage error is answered as JSON instead (runAdmin).
      writeErr: (text) => {
        if (!json) io.err(text.trimEnd());
      },
    });
  const groups = new Map<string, Command>();
  for (const [name, command] of Object.entries(COMMANDS)) {
    const words = name.split(' ');
    let parent = root;
    // Each word but the last is a group (`provider lithic status`: the groups `provider` and `provider lithic`).
    for (let depth = 1; depth < words.length; depth++) {
      const group = words.slice(0, depth).join(' ');
      const existing = groups.get(group);
      parent = existing ?? parent.command(words[depth - 1]!).description(GROUPS[group] ?? `${group} commands`);
      groups.set(group, parent);
    }
    const leaf = parent.command(words.at(-1)!).description(command.description);
    const { required, valueNames } = optionsOf(command.usage);
    for (const [option, { type, description }] of Object.entries(command.options)) {
      const flags = type === 'boolean' ? `--${option}` : `--${option} <${valueNames.get(option) ?? 'VALUE'}>`;
      if (required.has(option)) leaf.requiredOption(flags, description);
      else leaf.option(flags, description);
    }
    const positionals = positionalsOf(command.usage, words.length);
    for (const positional of positionals) leaf.argument(`<${positional}>`);
    leaf.action(async (...args: unknown[]) => {
      const self = args.at(-1) as Command;
      await run(name, valuesFrom(command.options, self.opts()), self.args);
    });
  }
  return root;
}

/**
 * `--help --json`: the help as printed, and the commands it covers (those of the group asked about, or
 * every one) with their usage and description, and at the top the groups with what each is for.
 */
function helpJson(argv: string[], help: string): Record<string, unknown> {
  const words = argv.filter((a) => !a.startsWith('-'));
  const asked = (words[0] === 'help' ? words.slice(1) : words).join(' ');
  const commands = Object.entries(COMMANDS)
    .filter(([name]) => asked === '' || name === asked || name.startsWith(`${asked} `))
    .map(([name, command]) => ({ command: name, usage: `${PROGRAM} ${command.usage}`, description: command.description }));
  return { ok: true, help, ...(asked === '' ? { groups: GROUPS } : {}), commands };
}

/** Help and version are answers (exit 0); every other error of commander's is a usage error. */
const ANSWERS = new Set(['commander.helpDisplayed', 'commander.version', 'commander.help']);

/**
 * Runs one admin command and returns the exit code: 0 on success (and for help and the version), 1 on a
 * refusal, 2 on bad usage. The runtime is opened only once the command line has been understood.
 */
/** What the command line can do in remote mode (`CARD_SERVICE_URL`): what concerns the bot itself. */
export const REMOTE_MODE_COMMANDS: readonly string[] = ['links list', 'links remove', 'keys status', 'keys rotate', 'backup', 'purge'];

export async function runAdmin(
  argv: string[],
  openRuntime: () => Promise<CoreRuntime>,
  io: AdminIo,
  options: {
    /** Remote mode: the users, cards and money are the other service's; commands about them refuse (2). */
    remote?: boolean;
  } = {},
): Promise<number> {
  const json = argv.includes('--json');
  // With --json, every outcome is one JSON object on standard output.
  const refuse = (message: string, code: number, extra: Record<string, unknown> = {}) => {
    if (json) io.out(JSON.stringify({ ok: false, error: message, ...extra }));
    else io.err(code === 2 ? message : `Refused: ${message}`);
    return code;
  };
  let code = 2;
  let ran: string | undefined;
  const run: Run = async (name, values, positionals) => {
    ran = name;
    if (options.remote && !REMOTE_MODE_COMMANDS.includes(name)) {
      code = refuse(
        `${name} works on the embedded core only: CARD_SERVICE_URL is set (remote mode), and that service keeps its own ` +
          `users, cards and money. Here: ${REMOTE_MODE_COMMANDS.join(', ')}`,
        2,
      );
      return code;
    }
    let runtime: CoreRuntime | undefined;
    try {
      runtime = await openRuntime();
      const result = await COMMANDS[name]!.run(runtime, values, positionals, { remote: options.remote === true });
      const warnings = result.warnings === undefined ? {} : { warnings: result.warnings };
      io.out(json ? JSON.stringify({ ok: true, ...result.json, ...warnings }) : result.human);
      for (const warning of result.warnings ?? []) io.err(`Warning: ${warning}`);
      code = 0;
    } catch (error) {
      if (error instanceof FailedCheck) {
        io.out(json ? JSON.stringify({ ok: false, ...error.details }) : error.message);
        code = 1;
      } else if (error instanceof AdminError || isCardServiceError(error)) code = refuse(error.message, 1);
      else throw error;
    } finally {
      await runtime?.close();
    }
    return code;
  };
  let answered = '';
  const cli = program(io, json, run, (text) => {
    answered = text;
  });
  try {
    // `admin` alone, or a group alone (`admin users`): its help, as a usage error.
    const words = argv.filter((a) => !a.startsWith('-'));
    if (words.length === 0 && !argv.some((a) => ['-h', '--help', '-v', '--version'].includes(a))) {
      io.err(cli.helpInformation().trimEnd());
      return json ? refuse('a command is needed', 2, { usage: cli.helpInformation() }) : 2;
    }
    await cli.parseAsync(argv, { from: 'user' });
    return ran === undefined ? 2 : code;
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (ANSWERS.has(error.code) && error.exitCode === 0) {
      if (json) io.out(JSON.stringify(error.code === 'commander.version' ? { ok: true, version: answered } : helpJson(argv, answered)));
      return 0;
    }
    // A group alone (`admin users`): its help on standard error, as a usage error.
    if (error.code === 'commander.help') return json ? refuse('a command is needed', 2, { commands: helpJson(argv, '').commands }) : 2;
    const words = argv.filter((a) => !a.startsWith('-'));
    const command = COMMANDS[words.slice(0, 2).join(' ')] ?? COMMANDS[words[0] ?? ''];
    const message = error.message.replace(/^error: /, '');
    if (json) return refuse(message, 2, command ? { usage: `${PROGRAM} ${command.usage}` } : {});
    if (command) io.err(`Usage: ${PROGRAM} ${command.usage}`);
    return 2;
  }
}
