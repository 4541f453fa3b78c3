import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createHarness, texts } from '../harness.js';
import { newCard } from '../../helpers/core.js';
import { callbackUpdate } from '../../helpers/updates.js';

describe('OTPs in chat', () => {
  it('lists the card OTPs and requests one from e-mail', async () => {
    const h = await createHarness();
    const me = await h.linkedCustomer(9401);
    const card = await newCard(h.t, me);
    let calls = await h.send(callbackUpdate({ id: 9401 }, `c:otps:${card.id}`));
    assert.match(texts(calls).join('\n'), /No OTPs for this card yet/);
    calls = await h.send(callbackUpdate({ id: 9401 }, `c:reqotp:${card.id}`));
    assert.match(texts(calls).join('\n'), /No OTP found for this card/);

    const mail = await h.t.admin.simulateOtpEmail(card.id);
    calls = await h.send(callbackUpdate({ id: 9401 }, `c:reqotp:${card.id}`));
    assert.match(texts(calls).join('\n'), new RegExp(`OTP for “${card.name}”: ${mail.code}`));
    const otp = await h.t.admin.simulateOtp(card.id, 1_250, 'Shop');
    calls = await h.send(callbackUpdate({ id: 9401 }, `c:otps:${card.id}`));
    const list = calls.find((c) => c.method === 'sendMessage')!;
    assert.match(String(list.payload.text), new RegExp(`${otp.code} · \\$12\\.50 · Shop`));
    assert.equal(list.payload.protect_content, true);
  });
});
