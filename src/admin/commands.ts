import { renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { reservePrivateFile, restrictToOwner } from '../infra/private-files.js';
import { isInsideFolder } from '../infra/real-paths.js';
import { formatAmount, toCents, type Cents } from '../core/ledger/money.js';
import { AdminError, type CardHold, type CardRecord, type SimulatedTransaction, type TokenRecord } from '../core/admin/admin.js';
import type { CoreRuntime } from '../app/compose.js';
import { isDepositError } from '../core/rules/deposit-errors.js';
import type { DepositRequest } from '../core/funding/deposits.js';
import type { DepositStatus } from '../core/funding/funding-tables.js';
import type { InvoiceRecord, InvoiceStatus } from '../core/funding/payments.js';
import { CATEGORY_GROUP_NAMES, isCategoryGroup, type CategoryGroup } from '../core/authorization/categories.js';
import type { Card } from '../core/operations/views.js';
import type { AutoTopupInput, ControlsInput } from '../core/operations/card-controls.js';
import { isCardServiceError } from '../core/rules/errors.js';
import type { LithicClient } from '../core/provider/lithic/lithic-client.js';
import { lithicEnroll, lithicSimulate, lithicStatus } from '../core/provider/lithic/lithic-operator.js';
import { secretFingerprint, storeProviderSecrets } from '../core/keys/provider-secrets.js';
import { LithicCardProvider } from '../core/provider/lithic/lithic-provider.js';

// Every command of the admin command line in one table, each entry small (usage, options, one run): the help
// lists them from here in this order and tests walk it (test/admin/*), so the file is long (over 300 lines) by
// design; what a command does lives in the core, not here.

/** What a command prints: lines for a person, one object for `--json`, and warnings about what it did (on stderr). */
export interface CommandOutput {
  human: string;
  json: Record<string, unknown>;
  /** Given, also the `warnings` field of the `--json` object (empty when there is nothing to warn of). */
  warnings?: string[];
}

export type Values = Record<string, string | boolean | undefined>;

interface Command {
  /** The command's words and options as the help shows them: options outside `[...]` and `(...)` are required. */
  usage: string;
  /** One line for the help. */
  description: string;
  /** Each option's type and one line for the command's help. */
  options: Record<string, { type: 'string' | 'boolean'; description: string }>;
  run(runtime: CoreRuntime, values: Values, positionals: string[], mode?: CommandMode): Promise<CommandOutput>;
}

/** What a command knows of how the process runs. */
export interface CommandMode {
  /** Remote mode (`CARD_SERVICE_URL`): a chat's token is the card service's, never one of ours. */
  remote: boolean;
}

/** A linked chat's token as the listings show it: ours by id; the card service's in remote mode; else one since deleted. */
const linkTokenLabel = (tokenId: string | null, mode: CommandMode | undefined) =>
  tokenId ?? (mode?.remote ? 'of the card service' : '(gone)');

function text(values: Values, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new AdminError(`--${name} is required`);
  return value;
}

function optionalText(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function amount(values: Values, name: string): Cents {
  const raw = text(values, name);
  const cents = /^\d+(\.\d{1,2})?$/.test(raw) ? toCents(Number(raw)) : null;
  if (cents === null) throw new AdminError(`--${name} must be an amount like 25 or 25.50`);
  return cents;
}

function optionalAmount(values: Values, name: string): Cents | undefined {
  return optionalText(values, name) === undefined ? undefined : amount(values, name);
}

function wholeNumber(raw: string | undefined, what: string): number {
  if (raw === undefined || !/^\d{1,9}$/.test(raw)) throw new AdminError(`${what} must be a whole number`);
  return Number(raw);
}

function positional(positionals: string[], what: string): string {
  const value = positionals[0];
  if (!value) throw new AdminError(`${what} is required`);
  return value;
}

/** The card a sandbox simulation acts on. */
const SIMULATED_CARD = { type: 'string', description: "the card's id (cards list)" } as const;

/** The options of a simulation on a card (purchase, refund, OTP): the card, an amount (`amount` says which), the merchant. */
function simulationOptions(amount: string): Command['options'] {
  return {
    card: SIMULATED_CARD,
    amount: { type: 'string', description: amount },
    merchant: { type: 'string', description: "the merchant's name" },
  };
}

/** The values of `simulationOptions`, in the sandbox's order; the amount required unless it has a default. */
function simulationValues(values: Values, defaultAmount?: Cents): [cardId: string, amount: Cents, merchant: string | undefined] {
  const cardId = text(values, 'card');
  const cents = defaultAmount === undefined ? amount(values, 'amount') : (optionalAmount(values, 'amount') ?? defaultAmount);
  return [cardId, cents, optionalText(values, 'merchant')];
}

function category(values: Values): 'Wallet' | 'Online' {
  const value = text(values, 'category');
  if (value !== 'Wallet' && value !== 'Online') throw new AdminError('--category must be Wallet or Online');
  return value;
}

const usd = (cents: Cents) => `$${formatAmount(cents)}`;
const table = (rows: string[][]) => rows.map((r) => r.join('  ')).join('\n') || '(none)';
const indent = (lines: string) => lines.replace(/^/gm, '  ');

function tokenTable(tokens: TokenRecord[]): string {
  return table(
    tokens.map((t) => [
      t.id,
      `${t.prefix ?? 'vc_????'}…`,
      `created ${t.createdAt}`,
      `last used ${t.lastUsedAt ?? 'never'}`,
      t.revokedAt ? `REVOKED ${t.revokedAt}` : 'active',
    ]),
  );
}

/** A withdrawal's or closure's hold as its `Pending` statement line reads: "withdrawal of $10.00 pending". */
const holdText = (h: CardHold) => `${h.kind} of ${usd(h.amount)} pending`;

function cardTable(cards: CardRecord[]): string {
  const status = (c: CardRecord) => (c.heldFee === null ? c.status : `${c.status} (fee ${usd(c.heldFee)} held)`);
  // The balance is lowered by what is held: say so beside it, or the card looks short of its statement.
  const balance = (c: CardRecord) => (c.holds.length === 0 ? usd(c.balance) : `${usd(c.balance)} (${c.holds.map(holdText).join(', ')})`);
  return table(cards.map((c) => [c.id, `#${c.number}`, c.name, c.maskedPan, c.category, status(c), balance(c), `user ${c.userId}`]));
}

const cardJson = (c: CardRecord) => ({
  ...c,
  balance: formatAmount(c.balance),
  holds: c.holds.map((h) => ({ ...h, amount: formatAmount(h.amount) })),
  heldFee: c.heldFee === null ? null : formatAmount(c.heldFee),
});

const limitText = (cents: Cents | null) => (cents === null ? 'off' : usd(cents));
const limitJson = (cents: Cents | null) => (cents === null ? null : formatAmount(cents));

/** A card as `cards show` prints it: what it is, its controls, its spending and its auto top-up. */
function cardControlsText(c: Card): string {
  const auto = c.autoTopup;
  return [
    `Card ${c.id} #${c.number} ${c.name} ${c.maskedPan} (${c.category}, ${c.status})`,
    `Type: ${c.type}`,
    `Balance: ${usd(c.balance)}`,
    `Limits: per purchase ${limitText(c.controls.perPurchaseLimit)}, daily ${limitText(c.controls.dailyLimit)}, ` +
      `monthly ${limitText(c.controls.monthlyLimit)}`,
    `Blocked categories: ${c.controls.blockedCategories.join(', ') || 'none'}`,
    `Spent: today ${usd(c.spentToday)}, this month ${usd(c.spentThisMonth)} (UTC)`,
    `Auto top-up: ${auto.enabled ? 'on' : 'off'}, ${usd(auto.topupAmount)} when below ${usd(auto.minBalance)}` +
      ` (last triggered ${auto.lastTriggered ?? 'never'})`,
  ].join('\n');
}

function cardControlsJson(c: Card) {
  return {
    id: c.id,
    number: c.number,
    name: c.name,
    maskedPan: c.maskedPan,
    status: c.status,
    type: c.type,
    balance: formatAmount(c.balance),
    controls: {
      perPurchaseLimit: limitJson(c.controls.perPurchaseLimit),
      dailyLimit: limitJson(c.controls.dailyLimit),
      monthlyLimit: limitJson(c.controls.monthlyLimit),
      blockedCategories: c.controls.blockedCategories,
    },
    spentToday: formatAmount(c.spentToday),
    spentThisMonth: formatAmount(c.spentThisMonth),
    autoTopup: { ...c.autoTopup, minBalance: formatAmount(c.autoTopup.minBalance), topupAmount: formatAmount(c.autoTopup.topupAmount) },
  };
}

/** A limit option: absent, `off` (none) or an amount. */
function limitOption(values: Values, name: string, field: 'perPurchaseLimit' | 'dailyLimit' | 'monthlyLimit'): ControlsInput {
  const raw = optionalText(values, name);
  if (raw === undefined) return {};
  return { [field]: raw === 'off' ? null : amount(values, name) };
}

/** A comma-separated list of category groups, each one of the list's. */
function categoriesOption(values: Values, name: string): CategoryGroup[] | undefined {
  const raw = optionalText(values, name);
  if (raw === undefined) return undefined;
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((n) => !isCategoryGroup(n));
  if (unknown.length > 0 || names.length === 0) {
    throw new AdminError(
      `--${name}: unknown category ${unknown.join(', ') || '(none given)'}. Allowed: ${CATEGORY_GROUP_NAMES.join(', ')}`,
    );
  }
  return names as CategoryGroup[];
}

/** A validation refusal in its items' words (the core's own message is only "Invalid input data"). */
async function withRefusalItems<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isCardServiceError(error) && error.issues) throw new AdminError(error.issues.map((i) => i.message).join('; '));
    throw error;
  }
}

/** Who decided, as recorded on a deposit request decided from the command line. */
const DECIDED_BY_CLI = 'admin-cli';
const DEPOSIT_STATUSES: readonly DepositStatus[] = ['pending', 'approved', 'rejected'];

function depositStatus(values: Values): DepositStatus | undefined {
  const value = optionalText(values, 'status');
  if (value === undefined) return undefined;
  if (!DEPOSIT_STATUSES.includes(value as DepositStatus)) throw new AdminError('--status must be pending, approved or rejected');
  return value as DepositStatus;
}

/** A deposit refusal (unknown request, decided already, bad reason) is a refusal of the command. */
async function refusingAsAdmin<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isDepositError(error)) throw new AdminError(error.message);
    throw error;
  }
}

function depositTable(requests: DepositRequest[]): string {
  return table(
    requests.map((r) =>
      [
        `#${r.id}`,
        r.status,
        usd(r.amount),
        `user ${r.userId} (${r.userName})`,
        `asked ${r.createdAt}`,
        r.note === null ? '' : `note: ${r.note}`,
        r.decidedAt === null ? '' : `by ${r.decidedBy} ${r.decidedAt}${r.reason === null ? '' : `: ${r.reason}`}`,
      ].filter((cell) => cell !== ''),
    ),
  );
}

const depositJson = (r: DepositRequest) => ({ ...r, amount: formatAmount(r.amount) });

const INVOICE_STATUSES: readonly InvoiceStatus[] = ['open', 'paid', 'credited'];

function invoiceStatus(values: Values): InvoiceStatus | undefined {
  const value = optionalText(values, 'status');
  if (value === undefined) return undefined;
  if (!INVOICE_STATUSES.includes(value as InvoiceStatus)) throw new AdminError('--status must be open, paid or credited');
  return value as InvoiceStatus;
}

/** An invoice's line, then a line per charge (Telegram's and the provider's ids, to find it at the provider). */
function invoiceTable(invoices: InvoiceRecord[]): string {
  return (
    invoices
      .map((i) =>
        [
          [i.id, i.status, usd(i.amount), `user ${i.userId}`, `chat ${i.chatId}`, `opened ${i.createdAt}`].join('  '),
          ...i.payments.map((p) =>
            indent(
              [
                p.credited ? 'credited' : 'OWED BACK',
                `${formatAmount(p.amount)} ${p.currency}`,
                `telegram ${p.telegramChargeId}`,
                `provider ${p.providerChargeId}`,
                p.at,
              ].join('  '),
            ),
          ),
        ].join('\n'),
      )
      .join('\n') || '(none)'
  );
}

const invoiceJson = (i: InvoiceRecord) => ({
  ...i,
  amount: formatAmount(i.amount),
  payments: i.payments.map((p) => ({ ...p, amount: formatAmount(p.amount) })),
});

/** Every admin command, by its words. */
export const COMMANDS: Record<string, Command> = {
  'users create': {
    description: 'Create a user with a wallet (funded with --deposit) and print a new API token, once',
    usage: 'users create --name NAME [--deposit AMOUNT]',
    options: {
      name: { type: 'string', description: "the user's name" },
      deposit: { type: 'string', description: 'an amount to put in the new wallet, e.g. 100 or 25.50 (default 0)' },
    },
    async run({ admin }, v) {
      const deposit = optionalAmount(v, 'deposit') ?? 0;
      const { userId, token } = await admin.createUser({ name: text(v, 'name'), deposit });
      return {
        human: `User ${userId} created with ${usd(deposit)} in the wallet.\nAPI token (shown once, keep it safe): ${token}`,
        json: { userId, token, walletBalance: formatAmount(deposit) },
      };
    },
  },
  'users list': {
    description: 'List users with their wallet balance and card count',
    usage: 'users list',
    options: {},
    async run({ admin }) {
      const users = await admin.listUsers();
      return {
        human: table(users.map((u) => [u.id, u.name, usd(u.walletBalance), `${u.cardCount} card(s)`])),
        json: { users: users.map((u) => ({ ...u, walletBalance: formatAmount(u.walletBalance) })) },
      };
    },
  },
  'tokens issue': {
    description: 'Issue another API token for a user, printed once',
    usage: 'tokens issue --user USER_ID',
    options: { user: { type: 'string', description: "the user's id (users list)" } },
    async run({ admin }, v) {
      const token = await admin.issueToken(text(v, 'user'));
      return { human: `API token (shown once, keep it safe): ${token}`, json: { token } };
    },
  },
  'tokens list': {
    description: "List a user's tokens: id, prefix, created, last used, revoked",
    usage: 'tokens list --user USER_ID',
    options: { user: { type: 'string', description: "the user's id (users list)" } },
    async run({ admin }, v) {
      const tokens = await admin.listTokens(text(v, 'user'));
      return { human: tokenTable(tokens), json: { tokens } };
    },
  },
  'tokens revoke': {
    description: 'Revoke one token, or every token of a user (their chats are unlinked and told)',
    usage: 'tokens revoke (--id TOKEN_ID | --user USER_ID --all | --token TOKEN)',
    options: {
      token: { type: 'string', description: 'revoke this token, given in full' },
      id: { type: 'string', description: 'revoke the token with this id (tokens list)' },
      user: { type: 'string', description: 'revoke every token of this user (with --all)' },
      all: { type: 'boolean', description: 'confirms --user: every token of the user is revoked' },
    },
    async run({ admin }, v) {
      const id = optionalText(v, 'id');
      const user = optionalText(v, 'user');
      const token = optionalText(v, 'token');
      if ([id, user, token].filter((x) => x !== undefined).length !== 1)
        throw new AdminError('Give exactly one of --id, --user (with --all) or --token');
      if (user !== undefined && v.all !== true) throw new AdminError('--user revokes every token of the user: add --all to confirm');
      const { tokens, chats } =
        id !== undefined
          ? { tokens: 1, ...(await admin.revokeTokenById(id)) }
          : token !== undefined
            ? { tokens: 1, ...(await admin.revokeToken(token)) }
            : await admin.revokeAllTokens(user!);
      return { human: `${tokens} token(s) revoked; ${chats.length} chat(s) unlinked.`, json: { revoked: tokens, unlinkedChats: chats } };
    },
  },
  'links list': {
    description: 'List the chats linked to tokens',
    usage: 'links list [--user USER_ID]',
    options: { user: { type: 'string', description: "only the chats linked to this user's tokens" } },
    async run({ admin }, v, _positionals, mode) {
      const links = await admin.listLinks({ userId: optionalText(v, 'user') });
      return {
        human: table(
          links.map((l) => [`chat ${l.chatId}`, `user ${l.userId}`, `token ${linkTokenLabel(l.tokenId, mode)}`, `linked ${l.linkedAt}`]),
        ),
        json: { links },
      };
    },
  },
  'links remove': {
    description: 'Unlink one chat (it is told once)',
    usage: 'links remove --chat CHAT_ID',
    options: { chat: { type: 'string', description: "the chat's id (links list), negative for a group" } },
    async run({ admin }, v) {
      const raw = text(v, 'chat');
      if (!/^-?\d{1,16}$/.test(raw)) throw new AdminError('--chat must be a chat id (a whole number)');
      await admin.removeLink(Number(raw));
      return { human: `Chat ${raw} unlinked; it will be told once.`, json: { unlinked: Number(raw) } };
    },
  },
  'users show': {
    description: "Show a user's wallet, cards, tokens and linked chats",
    usage: 'users show USER_ID',
    options: {},
    async run({ admin }, _v, p) {
      const user = await admin.showUser(positional(p, 'USER_ID'));
      return {
        human: [
          `User ${user.id} (${user.name}), created ${user.createdAt}`,
          `Wallet: ${usd(user.wallet.balance)} (updated ${user.wallet.updatedAt})` +
            (user.wallet.held > 0 ? `; ${usd(user.wallet.held)} held for cards being issued` : ''),
          `Cards:`,
          indent(cardTable(user.cards)),
          `Tokens:`,
          indent(tokenTable(user.tokens)),
          `Linked chats:`,
          indent(
            table(
              user.chats.map((c) => [`chat ${c.chatId}`, `token ${linkTokenLabel(c.tokenId, { remote: false })}`, `linked ${c.linkedAt}`]),
            ),
          ),
        ].join('\n'),
        json: {
          user: {
            ...user,
            wallet: { ...user.wallet, balance: formatAmount(user.wallet.balance), held: formatAmount(user.wallet.held) },
            cards: user.cards.map(cardJson),
          },
        },
      };
    },
  },
  'cards list': {
    description: 'List cards with their ids, numbers, states and balances (with any withdrawal or close pending)',
    usage: 'cards list [--user USER_ID]',
    options: { user: { type: 'string', description: "only this user's cards" } },
    async run({ admin }, v) {
      const cards = await admin.listCards({ userId: optionalText(v, 'user') });
      return { human: cardTable(cards), json: { cards: cards.map(cardJson) } };
    },
  },
  'cards show': {
    description: 'Show a card: its type, balance, spending controls, what it spent today and this month, its auto top-up',
    usage: 'cards show --card CARD_ID',
    options: { card: { type: 'string', description: "the card's id (cards list)" } },
    async run({ core, admin }, v) {
      const cardId = text(v, 'card');
      const card = await core.getCard(await admin.cardOwner(cardId), cardId);
      return { human: cardControlsText(card), json: { card: cardControlsJson(card) } };
    },
  },
  'cards controls': {
    description: "Set a card's spending controls for its holder: limits (off for none) and blocked categories",
    usage: 'cards controls --card CARD_ID [--per-purchase N|off] [--daily N|off] [--monthly N|off] [--block LIST] [--allow LIST]',
    options: {
      card: { type: 'string', description: "the card's id (cards list)" },
      'per-purchase': { type: 'string', description: 'the most one purchase may be, e.g. 25 or 25.50; off for none' },
      daily: { type: 'string', description: 'the most spent in a UTC day; off for none' },
      monthly: { type: 'string', description: 'the most spent in a UTC month; off for none' },
      block: { type: 'string', description: `categories to refuse, comma-separated, of: ${CATEGORY_GROUP_NAMES.join(', ')}` },
      allow: { type: 'string', description: 'blocked categories to allow again, comma-separated' },
    },
    async run({ core, admin }, v) {
      const cardId = text(v, 'card');
      const owner = await admin.cardOwner(cardId);
      const input: ControlsInput = {
        ...limitOption(v, 'per-purchase', 'perPurchaseLimit'),
        ...limitOption(v, 'daily', 'dailyLimit'),
        ...limitOption(v, 'monthly', 'monthlyLimit'),
      };
      const block = categoriesOption(v, 'block');
      const allow = categoriesOption(v, 'allow');
      if (block || allow) {
        const { blockedCategories } = await core.getControls(owner, cardId);
        input.blockedCategories = [...new Set([...blockedCategories, ...(block ?? [])])].filter((c) => !allow?.includes(c));
      }
      if (Object.keys(input).length === 0)
        throw new AdminError('Give at least one of --per-purchase, --daily, --monthly, --block, --allow');
      await withRefusalItems(() => core.setControls(owner, cardId, input));
      const card = await core.getCard(owner, cardId);
      return { human: `Controls set.\n${cardControlsText(card)}`, json: { card: cardControlsJson(card) } };
    },
  },
  'cards auto-topup': {
    description: "Set a card's auto top-up for its holder: on or off, the balance it tops up below, and by how much",
    usage: 'cards auto-topup --card CARD_ID (--on | --off) [--min-balance N] [--amount N]',
    options: {
      card: { type: 'string', description: "the card's id (cards list)" },
      on: { type: 'boolean', description: 'turn it on (needs an amount, given now or before)' },
      off: { type: 'boolean', description: 'turn it off (the amounts are kept)' },
      'min-balance': { type: 'string', description: 'top up when a purchase leaves the balance below this, e.g. 10' },
      amount: { type: 'string', description: 'how much each auto top-up adds, e.g. 25 (a top-up with its fee, from the wallet)' },
    },
    async run({ core, admin }, v) {
      const cardId = text(v, 'card');
      if ((v.on === true) === (v.off === true)) throw new AdminError('Give one of --on or --off');
      const owner = await admin.cardOwner(cardId);
      const minBalance = optionalAmount(v, 'min-balance');
      const topupAmount = optionalAmount(v, 'amount');
      const input: AutoTopupInput = {
        enabled: v.on === true,
        ...(minBalance === undefined ? {} : { minBalance }),
        ...(topupAmount === undefined ? {} : { topupAmount }),
      };
      await withRefusalItems(() => core.setAutoTopup(owner, cardId, input));
      const card = await core.getCard(owner, cardId);
      return { human: `Auto top-up set.\n${cardControlsText(card)}`, json: { card: cardControlsJson(card) } };
    },
  },
  'wallet deposit': {
    description: "Fund a user's wallet (a ledger journal)",
    usage: 'wallet deposit --user USER_ID --amount AMOUNT',
    options: {
      user: { type: 'string', description: "the user's id (users list)" },
      amount: { type: 'string', description: 'the amount to credit, e.g. 100 or 25.50' },
    },
    async run({ admin }, v) {
      const balance = await admin.deposit(text(v, 'user'), amount(v, 'amount'));
      return { human: `Deposited. Wallet balance: ${usd(balance)}`, json: { walletBalance: formatAmount(balance) } };
    },
  },
  'deposits list': {
    description: 'List deposit requests from chat, newest first',
    usage: 'deposits list [--status pending|approved|rejected] [--user USER_ID]',
    options: {
      status: { type: 'string', description: 'only the requests in this state' },
      user: { type: 'string', description: "only this user's requests" },
    },
    async run({ funding }, v) {
      const requests = await funding.deposits.list({ status: depositStatus(v), userId: optionalText(v, 'user') });
      return { human: depositTable(requests), json: { requests: requests.map(depositJson) } };
    },
  },
  'invoices list': {
    description: 'List Telegram Payments invoices with every charge, to reconcile with the payment provider',
    usage: 'invoices list [--status open|paid|credited] [--user USER_ID]',
    options: {
      status: { type: 'string', description: 'only the invoices in this state' },
      user: { type: 'string', description: "only this user's invoices" },
    },
    async run({ funding }, v) {
      const invoices = await funding.payments.listInvoices({ status: invoiceStatus(v), userId: optionalText(v, 'user') });
      const owedBack = invoices.reduce((n, i) => n + i.owedBack, 0);
      const warnings =
        owedBack === 0 ? [] : [`${owedBack} payment(s) credited nothing and are owed back: refund them with the payment provider`];
      return { human: invoiceTable(invoices), json: { invoices: invoices.map(invoiceJson) }, warnings };
    },
  },
  'deposits approve': {
    description: 'Approve a pending deposit request: its amount is credited to the wallet, once',
    usage: 'deposits approve --id REQUEST_ID',
    options: { id: { type: 'string', description: "the request's number (deposits list)" } },
    async run({ funding }, v) {
      const { request, walletBalance } = await refusingAsAdmin(() =>
        funding.deposits.approve(wholeNumber(optionalText(v, 'id'), '--id'), DECIDED_BY_CLI),
      );
      return {
        human: `Deposit request #${request.id} approved: ${usd(request.amount)} credited. Wallet balance: ${usd(walletBalance)}.`,
        json: { request: depositJson(request), walletBalance: formatAmount(walletBalance) },
      };
    },
  },
  'deposits reject': {
    description: 'Reject a pending deposit request with a reason the cardholder reads',
    usage: 'deposits reject --id REQUEST_ID --reason TEXT',
    options: {
      id: { type: 'string', description: "the request's number (deposits list)" },
      reason: { type: 'string', description: 'why, in words the cardholder reads' },
    },
    async run({ funding }, v) {
      const request = await refusingAsAdmin(() =>
        funding.deposits.reject(wholeNumber(optionalText(v, 'id'), '--id'), DECIDED_BY_CLI, text(v, 'reason')),
      );
      return { human: `Deposit request #${request.id} rejected: ${request.reason}.`, json: { request: depositJson(request) } };
    },
  },
  'bins list': {
    description: 'List BINs',
    usage: 'bins list',
    options: {},
    async run({ admin }) {
      const bins = await admin.listBins();
      return {
        human: table(
          bins.map((b) => [
            b.id,
            b.bin,
            b.network,
            b.wallet ? 'Wallet' : 'Online',
            b.country,
            `initial ${usd(b.initialBalance)}`,
            b.enabled ? 'enabled' : 'disabled',
          ]),
        ),
        json: { bins: bins.map((b) => ({ ...b, initialBalance: formatAmount(b.initialBalance) })) },
      };
    },
  },
  'bins add': {
    description: 'Add a BIN (warns of active plans whose limit is below its initial balance)',
    usage:
      'bins add --bin 123456 --network visa|master [--wallet] [--no-3ds] [--country US] [--currency USD] [--initial-balance AMOUNT] [--disabled]',
    options: {
      bin: { type: 'string', description: "the card numbers' first 6 digits" },
      network: { type: 'string', description: 'the card network: visa or master' },
      wallet: { type: 'boolean', description: 'its cards are Wallet cards (default: Online)' },
      'no-3ds': { type: 'boolean', description: 'its cards have no 3-D Secure, so no OTPs' },
      country: { type: 'string', description: 'the issuing country, ISO 3166-1 alpha-2 (default US)' },
      currency: { type: 'string', description: "the cards' currency, ISO 4217 (default USD)" },
      'initial-balance': { type: 'string', description: 'the balance a new card starts with (default 0)' },
      disabled: { type: 'boolean', description: 'add it disabled: no cards until bins enable' },
    },
    async run({ admin }, v) {
      const bin = await admin.addBin({
        bin: text(v, 'bin'),
        network: text(v, 'network'),
        wallet: v.wallet === true,
        threeDS: v['no-3ds'] !== true,
        country: optionalText(v, 'country') ?? 'US',
        currency: optionalText(v, 'currency') ?? 'USD',
        initialBalance: optionalAmount(v, 'initial-balance') ?? 0,
        enabled: v.disabled !== true,
      });
      // Added all the same: the operator may be about to raise or retire those plans.
      const warnings = (await admin.plansBelowInitialBalance(bin)).map(
        (plan) =>
          `BIN ${bin.bin} starts a card with ${usd(bin.initialBalance)}, above the limit of plan ${plan.id} (${plan.name}, ` +
          `${usd(plan.limit)}): no card of this BIN can be created on that plan`,
      );
      return {
        human: `BIN ${bin.bin} added as ${bin.id}.`,
        json: { bin: { ...bin, initialBalance: formatAmount(bin.initialBalance) } },
        warnings,
      };
    },
  },
  'bins enable': {
    description: 'Enable a BIN',
    usage: 'bins enable BIN_ID',
    options: {},
    async run({ admin }, _v, p) {
      await admin.setBinEnabled(positional(p, 'BIN_ID'), true);
      return { human: 'BIN enabled.', json: { enabled: true } };
    },
  },
  'bins disable': {
    description: 'Disable a BIN',
    usage: 'bins disable BIN_ID',
    options: {},
    async run({ admin }, _v, p) {
      await admin.setBinEnabled(positional(p, 'BIN_ID'), false);
      return { human: 'BIN disabled.', json: { enabled: false } };
    },
  },
  'plans list': {
    description: 'List card plans',
    usage: 'plans list',
    options: {},
    async run({ admin }) {
      const plans = await admin.listPlans();
      return {
        human: table(
          plans.map((p) => [String(p.id), p.name, `limit ${usd(p.limit)}`, `fee ${usd(p.creationFee)}`, p.active ? 'active' : 'inactive']),
        ),
        json: { plans: plans.map((p) => ({ ...p, limit: formatAmount(p.limit), creationFee: formatAmount(p.creationFee) })) },
      };
    },
  },
  'plans add': {
    description: 'Add a card plan (warns of enabled BINs whose initial balance is above its limit)',
    usage: 'plans add --name NAME --limit AMOUNT --fee AMOUNT [--description TEXT]',
    options: {
      name: { type: 'string', description: "the plan's name, as cardholders see it" },
      limit: { type: 'string', description: 'the most a card on this plan can take in top-ups, in all' },
      fee: { type: 'string', description: "the card's creation fee" },
      description: { type: 'string', description: 'a line about the plan for cardholders' },
    },
    async run({ admin }, v) {
      const plan = await admin.addPlan({
        name: text(v, 'name'),
        description: optionalText(v, 'description') ?? '',
        limit: amount(v, 'limit'),
        creationFee: amount(v, 'fee'),
      });
      const warnings = (await admin.binsAboveLimit(plan)).map(
        (bin) =>
          `Plan ${plan.id} (${plan.name}) has a limit of ${usd(plan.limit)}, below the initial balance of BIN ${bin.bin} ` +
          `(${bin.id}, ${usd(bin.initialBalance)}): no card of that BIN can be created on this plan`,
      );
      return {
        human: `Plan ${plan.id} (${plan.name}) added.`,
        json: { plan: { ...plan, limit: formatAmount(plan.limit), creationFee: formatAmount(plan.creationFee) } },
        warnings,
      };
    },
  },
  'plans deactivate': {
    description: 'Deactivate a card plan',
    usage: 'plans deactivate PLAN_ID',
    options: {},
    async run({ admin }, _v, p) {
      await admin.deactivatePlan(wholeNumber(p[0], 'PLAN_ID'));
      return { human: 'Plan deactivated.', json: { active: false } };
    },
  },
  'fees list': {
    description: 'List the top-up platform fees per category',
    usage: 'fees list',
    options: {},
    async run({ admin }) {
      const fees = await admin.listFees();
      return {
        human: table(fees.map((f) => [f.category, `${formatAmount(f.percentBps)}%`, `+ ${usd(f.fixed)}`])),
        json: { fees: fees.map((f) => ({ category: f.category, percent: formatAmount(f.percentBps), fixed: formatAmount(f.fixed) })) },
      };
    },
  },
  'fees set': {
    description: "Set a category's top-up platform fee",
    usage: 'fees set --category Wallet|Online --percent P --fixed AMOUNT',
    options: {
      category: { type: 'string', description: 'the cards it applies to: Wallet or Online' },
      percent: { type: 'string', description: 'the percent of each top-up, e.g. 2.5' },
      fixed: { type: 'string', description: "an amount added to each top-up's fee, e.g. 0.30" },
    },
    async run({ admin }, v) {
      const cat = category(v);
      const bps = amount(v, 'percent');
      const fixed = amount(v, 'fixed');
      await admin.setFee(cat, bps, fixed);
      return {
        human: `${cat} top-up fee: ${formatAmount(bps)}% + ${usd(fixed)}.`,
        json: { category: cat, percent: formatAmount(bps), fixed: formatAmount(fixed) },
      };
    },
  },
  'coupons create': {
    description: 'Create a coupon: a percent or an amount off the creation fee',
    usage: 'coupons create --code CODE (--percent P | --amount AMOUNT) [--expires ISO_DATE] [--max-redemptions N]',
    options: {
      code: { type: 'string', description: 'the code cardholders type' },
      percent: { type: 'string', description: 'a percent off the creation fee, e.g. 50' },
      amount: { type: 'string', description: 'an amount off the creation fee, e.g. 5' },
      expires: { type: 'string', description: 'when it stops working, e.g. 2027-01-31 (default: never)' },
      'max-redemptions': { type: 'string', description: 'how many times it can be used in all (default: no limit)' },
    },
    async run({ admin }, v) {
      const percent = optionalText(v, 'percent');
      const fixed = optionalText(v, 'amount');
      if ((percent === undefined) === (fixed === undefined)) throw new AdminError('Give exactly one of --percent or --amount');
      const expires = optionalText(v, 'expires');
      if (expires !== undefined && Number.isNaN(Date.parse(expires))) throw new AdminError('--expires must be a date like 2027-01-31');
      const max = optionalText(v, 'max-redemptions');
      const code = text(v, 'code');
      await admin.createCoupon({
        code,
        kind: percent !== undefined ? 'percent' : 'amount',
        value: percent !== undefined ? amount(v, 'percent') : amount(v, 'amount'),
        expiresAt: expires === undefined ? null : new Date(expires).toISOString(),
        maxRedemptions: max === undefined ? null : wholeNumber(max, '--max-redemptions'),
      });
      return { human: `Coupon ${code} created.`, json: { code } };
    },
  },
  'coupons list': {
    description: 'List coupons',
    usage: 'coupons list',
    options: {},
    async run({ admin }) {
      const coupons = await admin.listCoupons();
      return {
        human: table(
          coupons.map((c) => [
            c.code,
            c.kind === 'percent' ? `${formatAmount(c.value)}% off` : `${usd(c.value)} off`,
            `used ${c.redemptions}${c.maxRedemptions === null ? '' : `/${c.maxRedemptions}`}`,
            c.expiresAt ? `expires ${c.expiresAt}` : 'no expiry',
            c.active ? 'active' : 'inactive',
          ]),
        ),
        json: { coupons },
      };
    },
  },
  'coupons deactivate': {
    description: 'Deactivate a coupon',
    usage: 'coupons deactivate CODE',
    options: {},
    async run({ admin }, _v, p) {
      await admin.setCouponActive(positional(p, 'CODE'), false);
      return { human: 'Coupon deactivated.', json: { active: false } };
    },
  },
  'simulate purchase': {
    description: "Sandbox: a card purchase decided by the core's authorization engine, cleared at once unless --hold",
    usage: 'simulate purchase --card CARD_ID --amount AMOUNT [--merchant NAME] [--mcc 5411] [--country US] [--hold]',
    options: {
      ...simulationOptions('the amount of the purchase'),
      mcc: { type: 'string', description: "the merchant's category code, four digits (default 5999)" },
      country: { type: 'string', description: "the merchant's country, ISO 3166 alpha-2 (default US)" },
      hold: { type: 'boolean', description: 'leave it held (Pending) for simulate clear or simulate void' },
    },
    async run({ admin }, v) {
      const [cardId, cents, merchant] = simulationValues(v);
      const mcc = optionalText(v, 'mcc');
      const country = optionalText(v, 'country');
      return simulated(
        await admin.simulatePurchase(cardId, cents, merchant, {
          ...(mcc === undefined ? {} : { mcc }),
          ...(country === undefined ? {} : { country: country.toUpperCase() }),
          hold: v.hold === true,
        }),
        'purchase',
      );
    },
  },
  'simulate clear': {
    description: 'Sandbox: the merchant clears a held purchase (its amount, less, or at most 20 % more)',
    usage: 'simulate clear --transaction TRANSACTION_ID [--amount AMOUNT]',
    options: {
      transaction: { type: 'string', description: 'the held purchase (its transaction id, as simulate purchase --hold printed it)' },
      amount: { type: 'string', description: 'what the merchant takes (default: the amount held)' },
    },
    async run({ admin }, v) {
      return simulated(await admin.simulateClear(text(v, 'transaction'), optionalAmount(v, 'amount')), 'clear');
    },
  },
  'simulate void': {
    description: 'Sandbox: the merchant voids a held purchase (the hold back onto the card, the line Reversed)',
    usage: 'simulate void --transaction TRANSACTION_ID',
    options: { transaction: { type: 'string', description: 'the held purchase (its transaction id)' } },
    async run({ admin }, v) {
      return simulated(await admin.simulateVoid(text(v, 'transaction')), 'void');
    },
  },
  'simulate refund': {
    description: 'Sandbox: a refund credited to a card',
    usage: 'simulate refund --card CARD_ID --amount AMOUNT [--merchant NAME]',
    options: simulationOptions('the amount refunded'),
    async run({ admin }, v) {
      return simulated(await admin.simulateRefund(...simulationValues(v)), 'refund');
    },
  },
  'simulate otp': {
    description: 'Sandbox: a 3-D Secure OTP arrives for a card (pushed to chat)',
    usage: 'simulate otp --card CARD_ID [--amount AMOUNT] [--merchant NAME]',
    options: simulationOptions('the amount of the purchase it confirms (default 0)'),
    async run({ admin }, v) {
      const otp = await admin.simulateOtp(...simulationValues(v, 0));
      return { human: `OTP ${otp.code} arrived for the card (queued for chat).`, json: otp };
    },
  },
  'simulate 3ds': {
    description: "Sandbox: a purchase to approve in the cardholder's chat; waits for the answer (at most its validity, 5 min)",
    usage: 'simulate 3ds --card CARD_ID --amount AMOUNT --merchant NAME [--valid-for SECONDS]   (prints approved, declined or expired)',
    options: {
      ...simulationOptions('the amount of the purchase to approve'),
      'valid-for': { type: 'string', description: 'how long the challenge waits for its answer, in seconds (default and most 300)' },
    },
    async run({ admin }, v) {
      const validFor = optionalText(v, 'valid-for');
      const seconds = validFor === undefined ? undefined : wholeNumber(validFor, '--valid-for');
      const { outcome, challenge } = await admin.simulate3ds(text(v, 'card'), amount(v, 'amount'), text(v, 'merchant'), {
        validForMs: seconds === undefined ? undefined : seconds * 1000,
      });
      return {
        human: outcome,
        json: { outcome, challengeId: challenge.id, amount: formatAmount(challenge.amount), merchant: challenge.merchantName },
      };
    },
  },
  'simulate otp-email': {
    description: 'Sandbox: an OTP e-mail lands in the mailbox',
    usage: 'simulate otp-email --card CARD_ID',
    options: { card: SIMULATED_CARD },
    async run({ admin }, v) {
      const mail = await admin.simulateOtpEmail(text(v, 'card'));
      return { human: `An OTP e-mail with code ${mail.code} is in the sandbox mailbox.`, json: mail };
    },
  },
  'simulate issue': {
    description: 'Sandbox: the provider finishes issuing a card that has a temporary id',
    usage: 'simulate issue --card CARD_ID   (the provider finishes issuing a card that has a temporary id)',
    options: { card: { type: 'string', description: "the card's temporary id (cards list)" } },
    async run({ admin }, v) {
      const providerCardId = await admin.completeIssuance(text(v, 'card'));
      return { human: `Card issued by the provider as ${providerCardId}.`, json: { providerCardId } };
    },
  },
  'ledger check': {
    description: 'Recompute every balance from the ledger; exit 1 on any difference',
    usage: 'ledger check',
    options: {},
    async run({ admin }) {
      const result = await admin.checkLedger();
      const clean = result.differences.length === 0 && result.unbalancedJournals.length === 0 && result.total === 0;
      const lines = [
        `${result.accounts} accounts checked; sum of all balances ${usd(result.total)}.`,
        ...result.differences.map((d) => `account ${d.accountId} (${d.kind}): cached ${usd(d.cached)}, entries say ${usd(d.fromEntries)}`),
        ...result.unbalancedJournals.map((j) => `journal ${j} does not balance`),
        clean ? 'Ledger is consistent.' : 'LEDGER MISMATCH',
      ];
      if (!clean) throw new FailedCheck(lines.join('\n'), { ...result, consistent: false });
      return { human: lines.join('\n'), json: { ...result, consistent: true } };
    },
  },
  purge: {
    description: 'Delete expired OTP codes and delivered or stale outbox rows now',
    usage: 'purge   (OTP codes past OTP_RETENTION_SECONDS, delivered or stale outbox rows)',
    options: {},
    async run({ admin }) {
      const purged = await admin.purgeExpired();
      return {
        human: `Purged ${purged.otps} OTP code(s), ${purged.outbox} outbox row(s), ${purged.mailbox} sandbox e-mail(s).`,
        json: { purged },
      };
    },
  },
  'keys status': {
    description: 'Show the card-data key file and its fingerprint',
    usage: 'keys status',
    options: {},
    async run({ cardDataKey }) {
      const { fingerprint, file } = cardDataKey;
      return { human: `Card-data key ${fingerprint}${file ? ` in ${file}` : ''}.`, json: { fingerprint, file } };
    },
  },
  'keys rotate': {
    description: 'Re-encrypt every card under a new card-data key, in one transaction',
    usage: 'keys rotate --new-key-file FILE [--no-keep-retired]   (--no-keep-retired: delete the retired key once every card is re-sealed)',
    options: {
      'new-key-file': { type: 'string', description: 'the file holding the new card-data key' },
      'no-keep-retired': { type: 'boolean', description: 'delete the retired key once every card is re-sealed' },
    },
    async run({ cardDataKey }, v) {
      const rotation = await cardDataKey.rotate(text(v, 'new-key-file'), { keepRetired: v['no-keep-retired'] !== true });
      return {
        human: [
          `Re-encrypted ${rotation.cards} card(s) under the key ${rotation.to}, now in ${rotation.keyFile}: back it up.`,
          rotation.retiredKeyKept
            ? `The retired key ${rotation.from} is kept in ${rotation.retiredKeyFile}: database backups from before this rotation ` +
              'need it; move it to where those backups are kept (or delete it when they are gone).'
            : `The retired key ${rotation.from} was deleted from ${rotation.retiredKeyFile}: database backups from before this ` +
              'rotation can no longer be read, unless that key is backed up elsewhere.',
          'Restart every process that uses the database: they still hold the retired key.',
        ].join('\n'),
        json: { ...rotation },
      };
    },
  },
  backup: {
    description: 'Write an online, consistent copy of the SQLite database; prints the card-data key it needs',
    usage: 'backup --to FILE [--force]',
    options: {
      to: { type: 'string', description: 'the file to write the copy to (its folder must exist)' },
      force: { type: 'boolean', description: 'overwrite FILE if it exists' },
    },
    async run({ database, cardDataKey }, v) {
      if (!database.sqlite) throw new AdminError('backup copies the SQLite database; on Postgres use pg_dump');
      const target = path.resolve(text(v, 'to'));
      // A backup beside the key would put the cards and their key in one copy of that folder.
      const keyFolder = cardDataKey.file === undefined ? undefined : path.dirname(cardDataKey.file);
      if (keyFolder !== undefined && isInsideFolder(target, keyFolder)) {
        throw new AdminError(
          `${target} is in ${keyFolder}, the card-data key's folder, and a copy of that folder would hold both the cards ` +
            'and their key. Back up the database somewhere else.',
        );
      }
      refuseBackupTarget(target, v.force === true);
      // A copy of the card data: readable by its owner only, like the database. Written under a temporary
      // name and then renamed, so an overwritten backup (--force) is replaced only by a complete one.
      const temporary = `${target}.${process.pid}.tmp`;
      reservePrivateFile(temporary);
      let progress: { totalPages: number };
      try {
        progress = await database.sqlite.backup(temporary);
        restrictToOwner(temporary);
        renameSync(temporary, target);
      } catch (error) {
        rmSync(temporary, { force: true });
        throw error;
      }
      // The copy reads with this key only (after a rotation, an older copy needs the retired `<file>.old-<fingerprint>`):
      // the fingerprint says which key file a restore of this copy must put back.
      const { fingerprint } = cardDataKey;
      return {
        human:
          `Backed up ${progress.totalPages} pages to ${target}. It reads with the card-data key ${fingerprint} only, which it ` +
          'does not contain: keep a copy of that key apart from it (docs/backup-and-restore.md).',
        json: { file: target, pages: progress.totalPages, keyFingerprint: fingerprint },
      };
    },
  },
};

/**
 * Where `backup --to` may write: a file in a folder that exists, and not one that exists already unless
 * `--force` says to overwrite it (a backup written over another one loses the older copy).
 */
function refuseBackupTarget(target: string, force: boolean): void {
  const folder = path.dirname(target);
  const kind = (file: string) => {
    try {
      return statSync(file).isDirectory() ? 'folder' : 'file';
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
      throw error;
    }
  };
  if (kind(folder) !== 'folder') {
    throw new AdminError(
      `the folder ${folder} does not exist: create it first (mkdir -p ${folder}, mode 0700), or give --to a file in a folder that does`,
    );
  }
  const existing = kind(target);
  if (existing === 'folder')
    throw new AdminError(`${target} is a folder: give --to a file name in it, e.g. ${path.join(target, 'cards.db')}`);
  if (existing === 'file' && !force)
    throw new AdminError(`${target} already exists: add --force to overwrite it, or give --to another file`);
}

/** Lithic's client, or the refusal saying how to get one. */
function lithicOf(runtime: CoreRuntime): LithicClient {
  if (!runtime.lithic) throw new AdminError('CARD_PROVIDER is not lithic: set CARD_PROVIDER=lithic and LITHIC_API_KEY');
  return runtime.lithic;
}

/** A card's number, read from Lithic for a simulation (never printed). */
async function lithicPan(runtime: CoreRuntime, cardId: string): Promise<string> {
  const card = await runtime.database.db.selectFrom('cards').select('provider_card_id').where('id', '=', cardId).executeTakeFirst();
  if (!card) throw new AdminError(`no card ${cardId}`);
  return (await new LithicCardProvider(lithicOf(runtime)).readDetails(card.provider_card_id)).pan;
}

/** Lithic's simulation answered: the transaction's token, for `simulate clear|void`. */
function lithicSimulated(kind: string, token: string | null): CommandOutput {
  return { human: `Lithic simulated ${kind}: transaction ${token ?? '(no token)'}.`, json: { simulated: kind, transactionToken: token } };
}

/** `provider lithic …`: the status, the enrolment and the sandbox's simulations. */
const LITHIC_COMMANDS: Record<string, Command> = {
  'provider lithic status': {
    description: 'Lithic: reachable, API key valid, Auth Stream Access enrolled (and where)',
    usage: 'provider lithic status',
    options: {},
    async run(runtime) {
      const status = await lithicStatus(lithicOf(runtime));
      const yes = (b: boolean) => (b ? 'yes' : 'no');
      const output = {
        human: [
          `Lithic at ${lithicOf(runtime).baseUrl}`,
          `reachable: ${yes(status.reachable)}`,
          `API key valid: ${yes(status.keyValid)}`,
          `ASA enrolled: ${yes(status.asaEnrolled)}${status.asaUrl ? ` (${status.asaUrl})` : ''}`,
          ...(status.problem ? [`problem: ${status.problem}`] : []),
        ].join('\n'),
        json: { apiUrl: lithicOf(runtime).baseUrl, ...status },
      };
      // Lithic out of reach, or the key refused: printed the same, the exit code 1 (a check for scripts and probes).
      if (!status.reachable || !status.keyValid) throw new FailedCheck(output.human, output.json);
      return output;
    },
  },
  'provider lithic enroll': {
    description:
      'Lithic: registers <url>/provider/lithic/asa (Auth Stream Access) and <url>/provider/lithic/events (events), stores their secrets sealed',
    usage: 'provider lithic enroll --url URL',
    options: { url: { type: 'string', description: "the service's public https:// URL, e.g. https://cards.example.com" } },
    async run(runtime, v) {
      const url = text(v, 'url');
      if (!URL.canParse(url) || new URL(url).protocol !== 'https:') throw new AdminError('--url must be an https:// URL (Lithic calls it)');
      const e = await lithicEnroll(lithicOf(runtime), url);
      // Sealed under the card-data key; never printed: the operator compares them by fingerprint.
      await storeProviderSecrets(
        runtime.database.db,
        runtime.cipher,
        { LITHIC_ASA_SECRET: e.asaSecret, LITHIC_WEBHOOK_SECRET: e.webhookSecret },
        runtime.clock.now().toISOString(),
      );
      const asaSecretFingerprint = secretFingerprint(e.asaSecret);
      const webhookSecretFingerprint = secretFingerprint(e.webhookSecret);
      return {
        human: [
          `Enrolled: ASA ${e.asaUrl}, events ${e.eventsUrl} (subscription ${e.subscriptionToken}).`,
          `Stored both secrets in the database, sealed with the card-data key: ASA secret ${asaSecretFingerprint}, ` +
            `webhook secret ${webhookSecretFingerprint} (fingerprints).`,
          'Restart the service to use them; LITHIC_ASA_SECRET / LITHIC_WEBHOOK_SECRET in its environment, when set, win over them.',
        ].join('\n'),
        json: {
          asaUrl: e.asaUrl,
          eventsUrl: e.eventsUrl,
          subscriptionToken: e.subscriptionToken,
          secretsStored: true,
          asaSecretFingerprint,
          webhookSecretFingerprint,
          restartNeeded: true,
        },
      };
    },
  },
  'provider lithic simulate authorize': {
    description: "Lithic's sandbox: a purchase on the card (POST /v1/simulate/authorize), decided by this service's ASA route",
    usage: 'provider lithic simulate authorize --card CARD_ID --amount AMOUNT [--merchant NAME] [--mcc 5411]',
    options: {
      ...simulationOptions('the amount of the purchase'),
      mcc: { type: 'string', description: "the merchant's category code, four digits" },
    },
    async run(runtime, v) {
      const [cardId, cents, merchant] = simulationValues(v);
      const mcc = optionalText(v, 'mcc');
      if (mcc !== undefined && !/^\d{4}$/.test(mcc)) throw new AdminError('--mcc must be four digits');
      const pan = await lithicPan(runtime, cardId);
      const descriptor = merchant ?? 'Simulated merchant';
      return lithicSimulated(
        'authorize',
        await lithicSimulate(lithicOf(runtime), { kind: 'authorize', pan, amount: cents, descriptor, ...(mcc ? { mcc } : {}) }),
      );
    },
  },
  'provider lithic simulate clear': {
    description: "Lithic's sandbox: the merchant clears an authorization (POST /v1/simulate/clearing)",
    usage: 'provider lithic simulate clear --transaction TOKEN [--amount AMOUNT]',
    options: {
      transaction: { type: 'string', description: "Lithic's transaction token (simulate authorize printed it)" },
      amount: { type: 'string', description: 'what the merchant takes (default: the amount authorized)' },
    },
    run: simulateOnTransaction('clear'),
  },
  'provider lithic simulate void': {
    description: "Lithic's sandbox: the merchant voids an authorization (POST /v1/simulate/void)",
    usage: 'provider lithic simulate void --transaction TOKEN [--amount AMOUNT]',
    options: {
      transaction: { type: 'string', description: "Lithic's transaction token" },
      amount: { type: 'string', description: 'the amount voided (default: all of it)' },
    },
    run: simulateOnTransaction('void'),
  },
  'provider lithic simulate return': {
    description:
      "Lithic's sandbox: a merchant's refund onto the card (POST /v1/simulate/return: Lithic's document takes the card, not a transaction)",
    usage: 'provider lithic simulate return --card CARD_ID --amount AMOUNT [--merchant NAME]',
    options: simulationOptions('the amount refunded'),
    async run(runtime, v) {
      const [cardId, cents, merchant] = simulationValues(v);
      const pan = await lithicPan(runtime, cardId);
      return lithicSimulated(
        'return',
        await lithicSimulate(lithicOf(runtime), { kind: 'return', pan, amount: cents, descriptor: merchant ?? 'Simulated merchant' }),
      );
    },
  },
};
Object.assign(COMMANDS, LITHIC_COMMANDS);

/** `provider lithic simulate clear|void`: Lithic's simulation on a transaction, of `--amount` or all of it. */
function simulateOnTransaction(kind: 'clear' | 'void'): Command['run'] {
  return async (runtime, v) => {
    const cents = optionalAmount(v, 'amount');
    const transactionToken = text(v, 'transaction');
    return lithicSimulated(
      kind,
      await lithicSimulate(lithicOf(runtime), { kind, transactionToken, ...(cents === undefined ? {} : { amount: cents }) }),
    );
  };
}

/** A failed check or a refused simulation: printed like output (`ok: false` in `--json`), the exit code 1. */
export class FailedCheck extends Error {
  override readonly name = 'FailedCheck';
  constructor(
    message: string,
    readonly details: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** What a simulation decided, as `--json`'s `decision` names it. */
const DECISIONS = {
  purchase: (tx: SimulatedTransaction) => (tx.declineCode ? 'declined' : tx.status === 'Pending' ? 'held' : 'approved'),
  clear: (tx: SimulatedTransaction) => (tx.reason ? 'refused' : 'cleared'),
  void: () => 'voided',
  refund: () => 'credited',
} as const;

/**
 * A simulation's outcome: its status, decision and reason (the decline code, or why a clearing was refused), the
 * card's balance. A clearing refused (the hold stays) is a refusal: printed the same, the exit code 1.
 */
function simulated(tx: SimulatedTransaction, kind: keyof typeof DECISIONS): CommandOutput {
  const output = simulatedOutput(tx, kind);
  if (kind === 'clear' && tx.reason) throw new FailedCheck(output.human, output.json);
  return output;
}

function simulatedOutput(tx: SimulatedTransaction, kind: keyof typeof DECISIONS): CommandOutput {
  const reason = tx.declineCode ?? tx.reason ?? null;
  const auto = tx.autoTopup
    ? ` Auto top-up ${usd(tx.autoTopup.amount)}: ${tx.autoTopup.outcome}${tx.autoTopup.reason ? ` (${tx.autoTopup.reason})` : ''}.`
    : '';
  return {
    human: `${tx.status}${reason ? ` (${reason})` : ''}: transaction ${tx.transactionId}; card balance ${usd(tx.cardBalance)}.${auto}`,
    json: {
      ...tx,
      decision: DECISIONS[kind](tx),
      reason,
      cardBalance: formatAmount(tx.cardBalance),
      ...(tx.fix ? { fix: simulatedFix(tx.fix) } : {}),
      ...(tx.autoTopup ? { autoTopup: { ...tx.autoTopup, amount: formatAmount(tx.autoTopup.amount) } } : {}),
    },
  };
}

/** A decline's fix with its amounts as the command line prints money. */
function simulatedFix(fix: NonNullable<SimulatedTransaction['fix']>): Record<string, unknown> {
  if (fix.kind === 'topup') return { ...fix, amount: formatAmount(fix.amount) };
  if (fix.kind === 'raise_limit') return { ...fix, to: formatAmount(fix.to) };
  return fix;
}
