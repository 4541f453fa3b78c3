import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BotApiServer } from './helpers/bot-api-server.js';
import { ENTRY, nodeArgs, startProcess } from './helpers/processes.js';

// Ctrl-C on `npm start`: the terminal sends SIGINT to the whole foreground process group, and npm forwards
// it to its script as well, so the program gets SIGINT twice (a service manager that signals the group does
// the same). The run here is npm's own, on a package whose start script has the same shape as ours
// (`exec node <entry>`), the entry run as the other process tests run it (dist/ when built, else tsx).

const BOT_TOKEN = '123456:SIGNALS-test';

describe('npm start stopped by a signal to its process group', () => {
  let server: BotApiServer;
  let apiRoot: string;
  let dir: string;

  before(async () => {
    server = new BotApiServer();
    apiRoot = await server.start();
    dir = mkdtempSync(path.join(tmpdir(), 'npm-start-signals-'));
    const command = ['exec', JSON.stringify(process.execPath), ...nodeArgs(ENTRY.main).map((arg) => JSON.stringify(arg))].join(' ');
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'signals', private: true, scripts: { start: command } }));
  });
  after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({
    PATH: process.env.PATH ?? '',
    HOME: dir,
    LOG_LEVEL: 'info',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    BOT_TOKEN,
    TELEGRAM_API_ROOT: apiRoot,
    HTTP_ENABLED: 'false',
    DATABASE_URL: path.join(dir, 'cards.db'),
    CARD_DATA_KEY_FILE: path.join(dir, 'card-data.key'),
  });

  /** Resolves once getUpdates reaches the server after this call, or rejects after `ms`. */
  function nextPoll(ms: number): Promise<number> {
    server.lastPoll = undefined;
    const started = Date.now();
    return new Promise((resolve, reject) => {
      const check = setInterval(() => {
        if (server.lastPoll !== undefined) {
          clearInterval(check);
          resolve(Date.now() - started);
        } else if (Date.now() - started > ms) {
          clearInterval(check);
          reject(new Error(`no getUpdates within ${ms} ms`));
        }
      }, 25);
    });
  }

  it('SIGINT to the group shuts down once, gracefully (lease released): the next start polls within 15 s', {
    timeout: 60_000,
  }, async () => {
    const npm = spawn('npm', ['start', '--silent'], { cwd: dir, env: env(), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    npm.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    npm.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
    try {
      const deadline = Date.now() + 30_000;
      while (!output.includes('"bot polling"')) {
        assert.ok(Date.now() < deadline, `npm start did not start polling:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // As a terminal's Ctrl-C: the whole process group (npm, and the program, which npm also signals).
      process.kill(-npm.pid!, 'SIGINT');
      await exited;
    } finally {
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    // Once: the second SIGINT (npm's forward) either finds the shutdown under way ("Already shutting down") or
    // arrives after the exit; which of the two is a race between npm and the program, so neither is asserted.
    assert.equal(output.match(/"msg":"Shutting down: finishing the work in flight"/g)?.length, 1, output);
    assert.equal(output.match(/"msg":"Stopped"/g)?.length, 1, output);

    // A lease left behind would hold the next start for its 30 s; 15 s leaves room for a loaded machine's start.
    const polled = nextPoll(15_000);
    const again = startProcess(dir, env(), ENTRY.main);
    try {
      await polled;
      assert.ok(!again.output().includes('another process holds the polling lease'), again.output());
    } finally {
      again.child.kill('SIGTERM');
    }
    await again.exited;
  });
});
