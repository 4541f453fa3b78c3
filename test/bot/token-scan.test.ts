import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newApiToken } from '../../src/core/keys/secrets.js';
import { findApiTokens, holdsApiToken } from '../../src/bot/token-scan.js';
import { channelPostUpdate, editedMessageUpdate, messageUpdate, textUpdate } from '../helpers/updates.js';

describe('tokens never linger where they were pasted: what counts as a token', () => {
  const token = newApiToken();

  it('finds our tokens alone, inside other text, twice (once), and glued to other text', () => {
    assert.deepEqual(findApiTokens(token), [token]);
    assert.deepEqual(findApiTokens(`my token is ${token}, thanks`), [token]);
    assert.deepEqual(findApiTokens(`${token} ${token}`), [token]);
    assert.deepEqual(findApiTokens(`key=${token}xyz`), [`${token}xyz`]);
  });

  it("ignores 'vc_' that is not followed by a token's 43 characters", () => {
    assert.deepEqual(findApiTokens('what is vc_ in a token?'), []);
    assert.deepEqual(findApiTokens(token.slice(0, -1)), []);
  });

  it('looks at the text or caption of new and edited messages and channel posts', () => {
    assert.ok(holdsApiToken(textUpdate({ id: 1 }, `/start ${token}`)));
    assert.ok(holdsApiToken(messageUpdate({ id: 1, groupId: -1 }, { caption: token })));
    assert.ok(holdsApiToken(editedMessageUpdate({ id: 1 }, 5, { text: `x ${token}` })));
    assert.ok(holdsApiToken(channelPostUpdate(-100, token)));
    assert.ok(!holdsApiToken(textUpdate({ id: 1 }, 'hello')));
  });
});
