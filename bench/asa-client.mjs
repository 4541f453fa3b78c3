import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';

// The load generator of `bench/asa.bench.ts` (plain JavaScript: a worker thread loads it without tsx), in a worker thread so the server has the main thread to itself:
// each message is a round of signed requests to send (all at once, or one after the other), answered with each
// request's latency in ms, sent to answered.

/** @typedef {{ path: string, requests: { text: string, signature: string }[], atOnce: boolean }} ClientRound */

const { port, connections } = workerData;
const agent = new Agent({ keepAlive: true, maxSockets: connections });

/** @returns {Promise<number>} */
function post(path, body, signature) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-lithic-hmac': signature } },
      (res) => {
        /** @type {Buffer[]} */
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const answer = JSON.parse(Buffer.concat(chunks).toString());
          if (res.statusCode !== 200 || answer.result !== 'APPROVED') reject(new Error(`answered ${res.statusCode} ${answer.result}`));
          else resolve(performance.now() - started);
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

parentPort.on('message', async (/** @type {ClientRound | 'stop'} */ round) => {
  if (round === 'stop') {
    agent.destroy();
    parentPort.close();
    return;
  }
  try {
    /** @type {number[]} */
    let latencies;
    if (round.atOnce) latencies = await Promise.all(round.requests.map((r) => post(round.path, r.text, r.signature)));
    else {
      latencies = [];
      for (const r of round.requests) latencies.push(await post(round.path, r.text, r.signature));
    }
    parentPort.postMessage({ latencies });
  } catch (error) {
    parentPort.postMessage({ error: String(error) });
  }
});
