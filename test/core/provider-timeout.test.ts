import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FakeClock } from '../../src/infra/clock.js';
import { PENDING_GRACE_MS } from '../../src/core/operations/pending-operations.js';
import { ProviderError, SandboxCardProvider, type IssuedCard } from '../../src/core/provider/provider.js';
import {
  PROVIDER_TIMEOUT_DEFAULT_MS,
  PROVIDER_TIMEOUT_MAX_MS,
  withTimeout,
  type LateSuccess,
} from '../../src/core/provider/provider-timeout.js';
import { STATUS_HOLD_MS } from '../../src/core/operations/card-status.js';
import { eventually } from '../helpers/wait.js';

const SHORT_MS = 50;

/** A call that answers only when the test says so, and the signal it was given. */
function heldCall<T>() {
  let answer!: (value: T) => void;
  let fail!: (error: Error) => void;
  const box: { signal?: AbortSignal } = {};
  const promise = new Promise<T>((resolve, reject) => {
    answer = resolve;
    fail = reject;
  });
  return { promise, answer, fail, box };
}

function setUp() {
  const sandbox = new SandboxCardProvider({ clock: new FakeClock('2026-03-01T12:00:00.000Z') });
  const late: LateSuccess[] = [];
  const provider = withTimeout(sandbox, { timeoutMs: SHORT_MS, onLateSuccess: (l) => late.push(l) });
  return { sandbox, provider, late };
}

describe('provider calls are given up after PROVIDER_TIMEOUT_MS', () => {
  test('the longest timeout is below the status hold and the age at which a pending operation is settled as failed', () => {
    assert.ok(PROVIDER_TIMEOUT_DEFAULT_MS <= PROVIDER_TIMEOUT_MAX_MS);
    assert.ok(PROVIDER_TIMEOUT_MAX_MS < STATUS_HOLD_MS);
    assert.ok(PROVIDER_TIMEOUT_MAX_MS < PENDING_GRACE_MS);
  });

  test('a call that never answers fails as a provider error after the timeout, and its signal is aborted', async () => {
    const { sandbox, provider, late } = setUp();
    let signal: AbortSignal | undefined;
    sandbox.terminate = (_id, options) => {
      signal = options?.signal;
      return new Promise(() => undefined);
    };
    await assert.rejects(provider.terminate('sbx_1'), (error) => {
      assert.ok(error instanceof ProviderError);
      assert.equal(error.message, 'the card provider did not answer within 50 ms');
      return true;
    });
    assert.equal(signal?.aborted, true);
    assert.deepEqual(late, []);
  });

  test('a call that answers in time is answered as it was, refusals included, and nothing is reported', async () => {
    const { sandbox, provider, late } = setUp();
    const card = await provider.issue({ bin: '424242', country: 'US', name: 'Ads' });
    assert.match(card.pan, /^424242\d{10}$/);
    await provider.freeze(card.providerCardId!);
    sandbox.failNext('withdraw', 'insufficient funds at the provider');
    await assert.rejects(provider.withdraw(card.providerCardId!, 100), /insufficient funds at the provider/);
    assert.deepEqual(
      sandbox.calls.map((c) => [c.operation, c.ok]),
      [
        ['issue', true],
        ['freeze', true],
        ['withdraw', false],
      ],
    );
    assert.deepEqual(late, []);
  });

  test('a card issued after its creation was given up is terminated at once, and reported without card data', async () => {
    const { sandbox, provider, late } = setUp();
    const issue = sandbox.issue.bind(sandbox);
    const held = heldCall<IssuedCard>();
    sandbox.issue = () => held.promise;
    await assert.rejects(provider.issue({ bin: '424242', country: 'US', name: 'Ads' }), /did not answer within 50 ms/);
    const card = await issue({ bin: '424242', country: 'US' });
    held.answer(card);
    await eventually('the late issue is reported', () => late.length === 1);
    assert.deepEqual(late, [{ operation: 'issue', providerCardId: card.providerCardId, terminated: true }]);
    assert.ok(sandbox.calls.some((c) => c.operation === 'terminate' && c.providerCardId === card.providerCardId && c.ok));
    assert.ok(!JSON.stringify(late).includes(card.pan));
  });

  test('any other call that succeeds after it was given up is reported with its operation, card and amount', async () => {
    const { sandbox, provider, late } = setUp();
    const held = heldCall<void>();
    sandbox.withdraw = () => held.promise;
    await assert.rejects(provider.withdraw('sbx_7', 1_250), /did not answer within 50 ms/);
    held.answer();
    await eventually('the late withdrawal is reported', () => late.length === 1);
    assert.deepEqual(late, [{ operation: 'withdraw', providerCardId: 'sbx_7', amount: 1_250 }]);
  });

  test('a call that fails after it was given up changes nothing and is not reported', async () => {
    const { sandbox, provider, late } = setUp();
    const held = heldCall<void>();
    sandbox.freeze = () => held.promise;
    await assert.rejects(provider.freeze('sbx_8'), /did not answer within 50 ms/);
    held.fail(new ProviderError('too late'));
    // The next call's answer comes after the late failure has been handled (it was settled first).
    await provider.unfreeze('sbx_8');
    assert.deepEqual(late, []);
  });

  test('the sandbox does nothing on a call whose signal was aborted before it acts', async () => {
    const sandbox = new SandboxCardProvider({ clock: new FakeClock('2026-03-01T12:00:00.000Z') });
    const controller = new AbortController();
    controller.abort();
    await assert.rejects(sandbox.terminate('sbx_9', { signal: controller.signal }), ProviderError);
    assert.deepEqual(
      sandbox.calls.map((c) => c.ok),
      [false],
    );
  });
});
