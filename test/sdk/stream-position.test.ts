// The SDK's place in the server's stream (sdk/resume.ts, docs/maker-protocol.md section 3.5): a repeat is
// dropped, the seq is taken off what is handed on, and a new socket asks to resume the previous session.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StreamPosition } from '../../src/sdk/resume.js';
import type { ServerToMakerMessage } from '../../src/sdk/index.js';

describe('StreamPosition', () => {
  it('drops a seq at or below the last one read, and hands on the rest without their seq', () => {
    const position = new StreamPosition();
    const first: ServerToMakerMessage = { type: 'heartbeat', seq: 1, ts: 10 };
    assert.equal(position.accept(first), true);
    assert.deepEqual(first, { type: 'heartbeat', ts: 10 });
    assert.equal(position.accept({ type: 'heartbeat', seq: 1, ts: 10 }), false);
    assert.equal(position.accept({ type: 'auth_challenge', nonce: 'ab'.repeat(32), timestamp: 1 }), true, 'no seq: before the stream');
    assert.equal(position.lastSeq, 1);
  });

  it('a new session starts at 0 and names the previous session with the last seq read there', () => {
    const position = new StreamPosition();
    position.accept({ type: 'heartbeat', seq: 41, ts: 10 });
    assert.deepEqual(position.onAuthenticated('old-token', 'new-token', true), {
      type: 'resume',
      session_token: 'old-token',
      last_seq: 41,
    });
    assert.equal(position.lastSeq, 0);
  });

  it('no resume for a first session, the same session, or with resuming off', () => {
    assert.equal(new StreamPosition().onAuthenticated(null, 'new-token', true), null);
    assert.equal(new StreamPosition().onAuthenticated('token', 'token', true), null);
    assert.equal(new StreamPosition().onAuthenticated('old-token', 'new-token', false), null);
  });
});
