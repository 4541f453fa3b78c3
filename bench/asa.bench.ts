import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { canonicalJson, LITHIC_ASA_PATH, lithicHmac } from '../src/api/routes/lithic-asa.js';
import { createHttpServer } from '../src/api/server.js';
import { startCore } from '../src/app/compose.js';
import { FakeClock } from '../src/infra/clock.js';
import { createLogger } from '../src/infra/logger.js';

// Lithic's Auth Stream Access route (issue 34): `CONCURRENT` signed ASA requests sent at once over HTTP (keep-alive
// connections, one per request in flight), each on its own card, on SQLite on a file (WAL, each commit flushed, the
// group commit sharing commits), beside as many requests to a bare route in the same server answering APPROVED with
// no work (its raw-body parsing aside), in interleaved rounds of the same run. The latency is each request's, sent
// to answered, as the client sees it (the client runs in a worker thread, `asa-client.mjs`, so the server has the
// main thread to itself).
// Target: ASA p99 <= 50 ms at 200 at once.

const CONCURRENT = Number(process.env.BENCH_CONCURRENT_ASA ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const KEY = Buffer.alloc(32, 7);
const SECRET = 'bench-asa-secret';
const TARGET_P99_MS = 50;
const BARE_PATH = '/bench/bare-asa';

/** A round for the client (`asa-client.mjs`): its requests, signed, sent all at once or one after the other. */
interface ClientRound {
  path: string;
  requests: { text: string; signature: string }[];
  atOnce: boolean;
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

function figures(latencies: number[]): { p50: number; p99: number } {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
}

export default async function (): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cards-bench-asa-'));
  const clock = new FakeClock('2026-03-01T12:00:00.000Z');
  const runtime = await startCore({ databaseUrl: path.join(dir, 'asa.db'), cardDataKey: KEY, clock });
  let client: Worker | undefined;
  const app = createHttpServer({
    core: runtime.core,
    db: runtime.database.db,
    clock,
    logger: createLogger('silent'),
    lithic: { asaSecret: SECRET },
  });
  try {
    const { token } = await runtime.admin.createUser({ name: 'Bench', deposit: 1_000_000_000_000 });
    const caller = await runtime.core.authenticate(token);
    const plan = await runtime.admin.addPlan({
      name: 'Bench',
      description: 'no practical limit',
      limit: 1_000_000_000_000,
      creationFee: 0,
    });
    const bin = (await runtime.core.listBins()).find((b) => !b.wallet && b.initialBalance === 0)!;
    const cardTokens: string[] = [];
    for (let i = 0; i < CONCURRENT; i++) {
      const card = await runtime.core.createCard(caller, { bin_id: bin.id, planId: plan.id, name: `Bench ${i}` });
      await runtime.core.topup(caller, card.id, { amount: 1_000_000 });
      const cardToken = randomUUID();
      await runtime.database.db.updateTable('cards').set({ provider_card_id: cardToken }).where('id', '=', card.id).execute();
      cardTokens.push(cardToken);
    }
    // The bare route: what any answer costs on this server (the raw body read, the JSON answer).
    app.post(BARE_PATH, { config: { public: true }, schema: { hide: true } }, async () => ({ result: 'APPROVED' }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as AddressInfo).port;

    client = new Worker(new URL('./asa-client.mjs', import.meta.url), { workerData: { port, connections: CONCURRENT } });
    const worker = client;
    const send = async (round: ClientRound): Promise<number[]> => {
      worker.postMessage(round);
      const [reply] = (await once(worker, 'message')) as [{ latencies?: number[]; error?: string }];
      if (reply.error !== undefined) throw new Error(reply.error);
      return reply.latencies!;
    };
    /** One round's requests, signed beforehand (the signing is Lithic's cost, not ours). */
    const round = () =>
      cardTokens.map((cardToken, i) => {
        const body = asaBody(cardToken, 100 + (i % 900), i, clock.now());
        const text = JSON.stringify(body);
        return { text, signature: lithicHmac(SECRET, canonicalJson(body)) };
      });
    const atOnce = (urlPath: string) => send({ path: urlPath, requests: round(), atOnce: true });
    const oneAtATime = (urlPath: string) => send({ path: urlPath, requests: round(), atOnce: false });

    // A warm-up round each (connections opened, statements compiled), then interleaved rounds.
    await atOnce(LITHIC_ASA_PATH);
    await atOnce(BARE_PATH);
    const asa: number[] = [];
    const bare: number[] = [];
    const alone = { asa: [] as number[], bare: [] as number[] };
    for (let r = 0; r < ROUNDS; r++) {
      const asaFirst = r % 2 === 0;
      if (asaFirst) asa.push(...(await atOnce(LITHIC_ASA_PATH)));
      bare.push(...(await atOnce(BARE_PATH)));
      if (!asaFirst) asa.push(...(await atOnce(LITHIC_ASA_PATH)));
      alone.asa.push(...(await oneAtATime(LITHIC_ASA_PATH)));
      alone.bare.push(...(await oneAtATime(BARE_PATH)));
    }
    const ledger = await runtime.admin.checkLedger();
    if (ledger.differences.length > 0 || ledger.total !== 0) throw new Error('the ledger does not reconcile after the bench');
    const ms = (n: number) => `${n.toFixed(2)} ms`;
    const line = (own: number[], base: number[]) => {
      const a = figures(own);
      const b = figures(base);
      return `ASA p50 ${ms(a.p50)}  p99 ${ms(a.p99)}   bare APPROVED p50 ${ms(b.p50)}  p99 ${ms(b.p99)}`;
    };
    console.log(`SQLite: ${CONCURRENT} cards, ${ROUNDS} rounds (${asa.length} ASA and bare requests each way)`);
    console.log(`  one at a time:  ${line(alone.asa, alone.bare)}`);
    console.log(`  ${CONCURRENT} at once:   ${line(asa, bare)}`);
    console.log(`  target p99 <= ${TARGET_P99_MS} ms at ${CONCURRENT} at once: ${figures(asa).p99 <= TARGET_P99_MS ? 'met' : 'MISSED'}`);
  } finally {
    await client?.terminate();
    await app.close();
    await runtime.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An ASA request with the fields the route reads and Lithic's usual others (the tests check the full shape). */
function asaBody(cardToken: string, amount: number, i: number, now: Date) {
  return {
    token: randomUUID(),
    status: 'AUTHORIZATION',
    created: now.toISOString(),
    acquirer_fee: 0,
    amount,
    authorization_amount: amount,
    merchant_amount: amount,
    settled_amount: 0,
    cash_amount: 0,
    cardholder_currency: 'USD',
    merchant_currency: 'USD',
    amounts: {
      cardholder: { amount, conversion_rate: '1.000000', currency: 'USD' },
      merchant: { amount, currency: 'USD' },
      settlement: null,
      hold: null,
    },
    avs: { address: '', zipcode: '', address_on_file_match: 'NOT_PRESENT' },
    card: {
      token: cardToken,
      last_four: '4242',
      memo: 'Bench',
      spend_limit: 0,
      spend_limit_duration: 'FOREVER',
      state: 'OPEN',
      type: 'VIRTUAL',
    },
    merchant: {
      acceptor_id: '333301802529120',
      acquiring_institution_id: '191231',
      city: 'NEW YORK',
      country: 'USA',
      descriptor: `SHOP ${i % 17}`,
      mcc: i % 3 === 0 ? '5411' : '5999',
      state: 'NY',
      postal_code: '10001',
      street_address: null,
      phone_number: null,
    },
    name_validation: null,
    service_location: null,
    transaction_initiator: 'CARDHOLDER',
  };
}
