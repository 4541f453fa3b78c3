import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { lithicOpenApiSkip, lithicValidator } from '../helpers/lithic-openapi.js';
import { asaRequest, cardTransactionUpdated, threeDsChallenge, tokenizationCode, webhookPayload } from '../helpers/lithic-payloads.js';

// What Lithic sends our routes in tests is built from its document's webhook schemas and checked against them
// with ajv: a payload that drifts from Lithic's (a field renamed, a value the document does not list) is refused.

describe("test payloads are Lithic's own", { skip: lithicOpenApiSkip() }, () => {
  const cardToken = randomUUID();

  test('an ASA request is a valid card_authorization.approval_request carrying the card, amount and merchant', () => {
    const request = asaRequest({ cardToken, amount: 1234, descriptor: 'STEAM', mcc: '5816' });
    assert.deepEqual(lithicValidator().webhook('card_authorization.approval_request', request), []);
    assert.equal((request.card as { token: string }).token, cardToken);
    assert.equal((request.amounts as { cardholder: { amount: number } }).cardholder.amount, 1234);
    assert.equal((request.merchant as { mcc: string }).mcc, '5816');
  });

  test('card_transaction.updated carries its events, authorization then clearing', () => {
    const token = randomUUID();
    const update = cardTransactionUpdated({ cardToken, amount: 500, token, status: 'SETTLED', settled: 500 }, [
      { type: 'AUTHORIZATION', amount: 500 },
      { type: 'CLEARING', amount: 500 },
    ]);
    assert.deepEqual(lithicValidator().webhook('card_transaction.updated', update), []);
    assert.deepEqual(
      (update.events as { type: string }[]).map((e) => e.type),
      ['AUTHORIZATION', 'CLEARING'],
    );
  });

  test('three_ds_authentication.challenge and the tokenization code are valid against their webhooks', () => {
    const challenge = threeDsChallenge({ cardToken, amount: 4210, merchant: 'STEAM', expiry: new Date(Date.now() + 300_000) });
    assert.deepEqual(lithicValidator().webhook('three_ds_authentication.challenge', challenge), []);
    const code = tokenizationCode({ cardToken, authenticationCode: '123456' });
    assert.deepEqual(lithicValidator().webhook('tokenization.two_factor_authentication_code', code), []);
  });

  test('a payload that drifts from the document is refused when built', () => {
    assert.throws(
      () => asaRequest({ cardToken, amount: 100 }, { status: 'AUTHORISED' }),
      /status must be equal to one of the allowed values/,
    );
    assert.throws(() => asaRequest({ cardToken, amount: 1.5 }), /amount must be integer/);
    assert.throws(
      () => webhookPayload('card_transaction.updated', { event_type: 'card_transaction.created' }),
      /must be equal to constant/,
    );
    assert.throws(
      () => tokenizationCode({ cardToken, authenticationCode: '1' }, { activation_method: { type: 'CARRIER_PIGEON', value: 'x' } }),
      /activation_method\/type must be equal to one of the allowed values/,
    );
  });
});
