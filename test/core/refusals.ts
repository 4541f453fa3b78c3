import assert from 'node:assert/strict';
import { CardServiceError, type ErrorCode } from '../../src/core/rules/errors.js';

/** Awaits `promise` and checks it was refused with `code` and exactly `message`. */
export async function assertRefused(promise: Promise<unknown>, code: ErrorCode, message: string): Promise<CardServiceError> {
  let caught: unknown;
  await assert.rejects(promise, (error) => {
    caught = error;
    return true;
  });
  assert.ok(caught instanceof CardServiceError, `expected a CardServiceError, got ${String(caught)}`);
  assert.equal(caught.message, message);
  assert.equal(caught.code, code);
  return caught;
}
