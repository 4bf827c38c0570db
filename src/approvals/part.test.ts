import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { actionDataPart } from './part.js';

describe('actionDataPart', () => {
  it('has exactly the wire keys, with an ISO expiry', () => {
    const part = actionDataPart(
      {
        actionId: 'abc',
        tool: 'send_email',
        args: { to: '[email redacted]' },
        level: 'L4',
        expiresAt: Date.UTC(2026, 0, 1, 0, 15),
      },
      'https://gw.example/approvals/abc',
    );
    assert.deepEqual(part, {
      action_id: 'abc',
      tool: 'send_email',
      args: { to: '[email redacted]' },
      level: 'L4',
      expires_at: '2026-01-01T00:15:00.000Z',
      approve_url: 'https://gw.example/approvals/abc',
    });
    assert.deepEqual(JSON.parse(JSON.stringify(part)), part);
  });

  it('flags hidden characters and adds the escaped, lossless display of the arguments', () => {
    const args = { account: '\u2066\u202E9876543210\u202C\u2069' };
    const part = actionDataPart(
      { actionId: 'abc', tool: 'transfer', args, level: 'L4', expiresAt: 0 },
      'https://gw.example/approvals/abc',
    );
    assert.equal(part.hidden_characters, true);
    assert.equal(part.args_display, '{"account":"\\u2066\\u202E9876543210\\u202C\\u2069"}');
    assert.deepEqual(JSON.parse(part.args_display ?? ''), args);
  });
});
