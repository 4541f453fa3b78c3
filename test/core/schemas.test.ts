import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CardServiceError, type ValidationIssue } from '../../src/core/rules/errors.js';
import { parseInput } from '../../src/core/rules/schemas.js';
import { createTestCore, type TestCore } from '../helpers/core.js';

let t: TestCore;
before(async () => {
  t = await createTestCore();
});
after(() => t.close());

function issuesOf(run: () => unknown): ValidationIssue[] {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof CardServiceError);
    assert.equal(error.code, 'VALIDATION');
    assert.equal(error.message, 'Invalid input data');
    return error.issues ?? [];
  }
  assert.fail('expected a validation error');
}

const topup = (amount: unknown) => parseInput(t.core.schemas.topup, { amount });
const withdraw = (amount: unknown) => parseInput(t.core.schemas.withdraw, { amount });
const createCard = (body: unknown) => parseInput(t.core.schemas.createCard, body);

describe('top-up amount (spec 4.6 rule 1, section 8)', () => {
  test('a top-up of 4.99 is refused with the spec item: too_small, minimum 5, "Minimum top-up amount is 5"', () => {
    assert.deepEqual(
      issuesOf(() => topup(4.99)),
      [
        {
          code: 'too_small',
          minimum: 5,
          type: 'number',
          inclusive: true,
          exact: false,
          message: 'Minimum top-up amount is 5',
          path: ['amount'],
        },
      ],
    );
  });

  test('a top-up of 5.00 is accepted as 500 cents', () => {
    assert.deepEqual(topup(5), { amount: 500 });
    assert.deepEqual(topup(5.0), { amount: 500 });
  });

  test('a top-up of 10,000.00 is accepted', () => {
    assert.deepEqual(topup(10_000), { amount: 1_000_000 });
  });

  test('a top-up of 10,000.01 is refused: too_big, maximum 10000', () => {
    assert.deepEqual(
      issuesOf(() => topup(10_000.01)),
      [
        {
          code: 'too_big',
          maximum: 10_000,
          type: 'number',
          inclusive: true,
          exact: false,
          message: 'Maximum top-up amount is 10000',
          path: ['amount'],
        },
      ],
    );
  });

  test('a top-up with more than 2 decimals (5.001) is refused', () => {
    const issues = issuesOf(() => topup(5.001));
    assert.equal(issues.length, 1);
    assert.equal(issues[0]?.message, 'Amount must have at most 2 decimal places');
    assert.deepEqual(issues[0]?.path, ['amount']);
  });

  test('a third decimal on a large amount is refused, not rounded (1000.001, 9999.999)', () => {
    for (const amount of [1_000.001, 9_999.999]) {
      assert.deepEqual(
        issuesOf(() => topup(amount)).map((i) => i.message),
        ['Amount must have at most 2 decimal places'],
      );
      assert.deepEqual(
        issuesOf(() => withdraw(amount)).map((i) => i.message),
        ['Amount must have at most 2 decimal places'],
      );
    }
  });

  test('two-decimal amounts convert to exact cents (no float drift)', () => {
    assert.deepEqual(topup(19.99), { amount: 1_999 });
    assert.deepEqual(topup(0.1 + 5.2), { amount: 530 });
    assert.deepEqual(topup(1_234.56), { amount: 123_456 });
  });

  test('a missing or non-numeric amount is refused', () => {
    assert.equal(issuesOf(() => topup(undefined))[0]?.message, 'Amount is required');
    assert.equal(issuesOf(() => topup('10'))[0]?.code, 'invalid_type');
    assert.equal(issuesOf(() => topup(Number.NaN))[0]?.path[0], 'amount');
  });

  test('unknown fields in the body are refused', () => {
    issuesOf(() => parseInput(t.core.schemas.topup, { amount: 10, extra: 1 }));
  });
});

describe('withdrawal amount (spec 4.7, section 8)', () => {
  test('a withdrawal of 0.99 is refused with the spec item: "Minimum withdrawal amount is 1.00"', () => {
    assert.deepEqual(
      issuesOf(() => withdraw(0.99)),
      [
        {
          code: 'too_small',
          minimum: 1,
          type: 'number',
          inclusive: true,
          exact: false,
          message: 'Minimum withdrawal amount is 1.00',
          path: ['amount'],
        },
      ],
    );
  });

  test('a withdrawal of 1.00 is accepted', () => {
    assert.deepEqual(withdraw(1), { amount: 100 });
  });

  test('a withdrawal of 10,000.01 is refused: too_big, maximum 10000', () => {
    const [issue] = issuesOf(() => withdraw(10_000.01));
    assert.equal(issue?.code, 'too_big');
    assert.equal(issue?.maximum, 10_000);
    assert.equal(issue?.inclusive, true);
    assert.equal(issue?.exact, false);
    assert.equal(issue?.type, 'number');
    assert.deepEqual(issue?.path, ['amount']);
    assert.deepEqual(withdraw(10_000), { amount: 1_000_000 });
  });

  test('a withdrawal with more than 2 decimals is refused', () => {
    assert.equal(issuesOf(() => withdraw(1.005))[0]?.message, 'Amount must have at most 2 decimal places');
  });
});

describe('card creation input (spec 4.4, section 8)', () => {
  const valid = { bin_id: 'b', planId: 1, name: 'Ads' };

  test('an empty card name is refused with "Card name is required"', () => {
    assert.deepEqual(
      issuesOf(() => createCard({ ...valid, name: '' })),
      [{ code: 'too_small', minimum: 1, type: 'string', inclusive: true, exact: false, message: 'Card name is required', path: ['name'] }],
    );
  });

  test('a missing card name is refused with "Card name is required"', () => {
    const [issue] = issuesOf(() => createCard({ bin_id: 'b', planId: 1 }));
    assert.equal(issue?.message, 'Card name is required');
    assert.deepEqual(issue?.path, ['name']);
  });

  test('a card name of 255 characters is accepted, 256 refused', () => {
    assert.equal(createCard({ ...valid, name: 'x'.repeat(255) }).name.length, 255);
    const [issue] = issuesOf(() => createCard({ ...valid, name: 'x'.repeat(256) }));
    assert.equal(issue?.code, 'too_big');
    assert.equal(issue?.maximum, 255);
    assert.equal(issue?.type, 'string');
  });

  test('bin_id and an integer planId are required; coupon_id is optional', () => {
    assert.deepEqual(createCard({ ...valid, coupon_id: 'HALF' }), { ...valid, coupon_id: 'HALF' });
    assert.deepEqual(issuesOf(() => createCard({ name: 'Ads', planId: 1 }))[0]?.path, ['bin_id']);
    assert.deepEqual(issuesOf(() => createCard({ ...valid, planId: 1.5 }))[0]?.path, ['planId']);
    assert.deepEqual(issuesOf(() => createCard({ ...valid, planId: '1' }))[0]?.path, ['planId']);
  });
});

describe('transactions query (spec 4.12, section 8)', () => {
  const query = (q: unknown) => parseInput(t.core.schemas.transactionsQuery, q);

  test('page and limit default when absent', () => {
    assert.deepEqual(query({}), {});
  });

  test('a limit of 100 is accepted and 101 refused; a page of 0 is refused', () => {
    assert.deepEqual(query({ page: '2', limit: '100' }), { page: 2, limit: 100 });
    assert.equal(issuesOf(() => query({ limit: '101' }))[0]?.code, 'too_big');
    assert.equal(issuesOf(() => query({ limit: '0' }))[0]?.code, 'too_small');
    assert.equal(issuesOf(() => query({ page: '0' }))[0]?.code, 'too_small');
    assert.deepEqual(issuesOf(() => query({ page: 'x' }))[0]?.path, ['page']);
  });
});
