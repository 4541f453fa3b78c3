import http from 'node:http';
import { sql } from 'kysely';
import { openDatabase } from '../src/db/database.js';
import { newRecordId } from '../src/core/ids.js';
import { hashToken } from '../src/core/keys/secrets.js';
import { SYSTEM_ACCOUNTS } from '../src/core/ledger/ledger.js';
import { topupOnce } from '../src/core/money-store/postgres/topup-statement.js';

// The scale bench's baseline: the least any server does for a durable top-up on Postgres. A bare
// `node:http` route runs the core's top-up statement (the token checked by it, one round trip, the same
// shared connections) and answers with the balances: no framework, no validation, no rate limits, no
// access log, no metrics, no refusal wording. `bench/scale.bench.ts` runs it as 1, 2 and 4 processes beside
// the API, so what more processes cost on the host itself (its cores shared by the processes, Postgres and
// the load generator) is measured in the same run as what they cost the API.
//
// Env: DATABASE_URL (Postgres), DATABASE_POOL_SIZE, HTTP_PORT, TOPUP_COOLDOWN_SECONDS.

const { DATABASE_POOL_SIZE } = process.env;
const database = openDatabase(process.env.DATABASE_URL!, { poolSize: DATABASE_POOL_SIZE ? Number(DATABASE_POOL_SIZE) : undefined });
const cooldownMs = Number(process.env.TOPUP_COOLDOWN_SECONDS ?? 60) * 1000;
const revenue = (await sql<{ id: number }>`select id from accounts where code = ${SYSTEM_ACCOUNTS.revenue}`.execute(database.db)).rows[0]!
  .id;
const TOPUP = /^\/api\/v1\/cards\/([^/]+)\/topup$/;

const server = http.createServer((request, response) => {
  const answer = (status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  if (request.url === '/livez') return answer(200, { ok: true });
  const cardId = TOPUP.exec(request.url ?? '')?.[1];
  const token = request.headers.authorization?.slice('Bearer '.length);
  if (request.method !== 'POST' || !cardId || !token) return answer(404, { ok: false });
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const { amount } = JSON.parse(Buffer.concat(chunks).toString()) as { amount: number };
    const now = Date.now();
    const id = newRecordId();
    const holder = { tokenHash: hashToken(token), authenticated: () => undefined };
    const args = [
      cardId,
      Math.round(amount * 100),
      new Date(now).toISOString(),
      new Date(now - cooldownMs).toISOString(),
      revenue,
      id,
      `topup:${id}`,
    ] as const;
    topupOnce(database.db, holder, [...args]).then(
      (outcome) =>
        outcome.moved
          ? answer(200, { ok: true, data: { walletBalance: outcome.moved.walletBalance, cardBalance: outcome.moved.cardBalance } })
          : answer(400, { ok: false }),
      () => answer(500, { ok: false }),
    );
  });
});
server.listen(Number(process.env.HTTP_PORT), '127.0.0.1');
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void database.close();
});
