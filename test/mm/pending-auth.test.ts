// The gateway's book of sockets awaiting auth (src/mm/pending-auth.ts): shares per address and network, the
// order of arrival, the oldest idle socket (one being verified is passed over), and pressure past half.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEV_DOMAIN_TAG } from '../../src/crypto/maker-challenge.js';
import { Connection } from '../../src/mm/connection.js';
import { createChallenge } from '../../src/mm/handshake.js';
import { PendingAuth } from '../../src/mm/pending-auth.js';
import { ManualClock } from '../helpers/manual-clock.js';

const clock = new ManualClock(1_800_000_000_000);
let seq = 0;

/** A socket as the authenticator adds it to the book: sent its challenge, its auth deadline running. */
function conn(address: string, network: string): Connection {
  const c = new Connection(++seq, address, address, network);
  const challenge = createChallenge(DEV_DOMAIN_TAG, clock.nowMs(), 30_000);
  c.auth = { phase: 'awaiting_response', challenge, authTimer: clock.setTimer(() => {}, 10_000) };
  return c;
}

/** Its auth_response passed the checks: now being verified (never evicted). */
function startVerifying(c: Connection): void {
  assert.equal(c.auth.phase, 'awaiting_response');
  c.auth = { phase: 'verifying', address: '0x' + '11'.repeat(20), authTimer: c.auth.authTimer };
}

describe('PendingAuth', () => {
  it('refuses past an address share, then past a network share; removal frees both', () => {
    const book = new PendingAuth({ maxPending: 10, maxPerAddress: 2, maxPerNetwork: 3 });
    const a1 = conn('10.0.0.1', '10.0.0.0/24');
    book.add(a1);
    book.add(conn('10.0.0.1', '10.0.0.0/24'));
    assert.equal(book.refusalFor('10.0.0.1', '10.0.0.0/24'), 'PER_ADDRESS');
    assert.equal(book.refusalFor('10.0.0.2', '10.0.0.0/24'), null);
    book.add(conn('10.0.0.2', '10.0.0.0/24'));
    assert.equal(book.refusalFor('10.0.0.3', '10.0.0.0/24'), 'PER_NETWORK');
    assert.equal(book.refusalFor('10.0.1.3', '10.0.1.0/24'), null);
    assert.equal(book.remove(a1), true);
    assert.equal(book.remove(a1), false, 'idempotent');
    assert.equal(book.refusalFor('10.0.0.1', '10.0.0.0/24'), null);
    assert.equal(book.count, 2);
  });

  it('the oldest idle socket is the first that has not answered; pressure is past half, full at the bound', () => {
    const book = new PendingAuth({ maxPending: 4, maxPerAddress: 4, maxPerNetwork: 4 });
    const [first, second, third, fourth] = [0, 1, 2, 3].map((i) => conn(`10.0.0.${i}`, '10.0.0.0/24')) as [
      Connection,
      Connection,
      Connection,
      Connection,
    ];
    book.add(first);
    book.add(second);
    assert.equal(book.isUnderPressure, false, '2 of 4 is half, not past it');
    book.add(third);
    assert.equal(book.isUnderPressure, true);
    book.add(fourth);
    assert.equal(book.isFull, true);
    assert.throws(() => book.add(conn('10.0.9.9', '10.0.9.0/24')), /past the bound/);
    assert.equal(book.oldestIdle(), first);
    startVerifying(first);
    assert.equal(book.oldestIdle(), second);
    for (const c of [second, third, fourth]) startVerifying(c);
    assert.equal(book.oldestIdle(), null, 'every one is being verified: no eviction');
  });
});
