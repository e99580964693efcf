// The share of the used login nonces one caller may hold (issue 33 item 8; src/auth/nonce-spenders.ts): per
// IP and per network, counted until each nonce expires, with Retry-After until the caller's first one does.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { NonceSpenders } from '../../src/auth/nonce-spenders.js';

const T0_MS = 1_700_000_000_000;
const TTL_MS = 300_000;
const caller = (ip: string, network = 'net-a') => ({ ip, network });

describe('NonceSpenders', () => {
  it('an IP past its share waits until its first kept nonce expires; another IP of the network does not', () => {
    const spenders = new NonceSpenders({ maxPerIp: 2, maxPerNetwork: 10, maxKeys: 100 });
    spenders.record(caller('1.1.1.1'), T0_MS + TTL_MS, T0_MS);
    spenders.record(caller('1.1.1.1'), T0_MS + 1_000 + TTL_MS, T0_MS + 1_000);
    assert.equal(spenders.retryAfterS(caller('1.1.1.1'), T0_MS + 2_000), 298);
    assert.equal(spenders.retryAfterS(caller('1.1.1.2'), T0_MS + 2_000), 0);
    // Once the first has expired it no longer counts.
    assert.equal(spenders.retryAfterS(caller('1.1.1.1'), T0_MS + TTL_MS), 0);
  });

  it('a network past its share refuses every IP of it, whatever each holds', () => {
    const spenders = new NonceSpenders({ maxPerIp: 10, maxPerNetwork: 3, maxKeys: 100 });
    for (const ip of ['2.2.2.1', '2.2.2.2', '2.2.2.3']) spenders.record(caller(ip), T0_MS + TTL_MS, T0_MS);
    assert.equal(spenders.retryAfterS(caller('2.2.2.4'), T0_MS), 300);
    assert.equal(spenders.retryAfterS(caller('2.2.2.4', 'net-b'), T0_MS), 0);
  });

  it('keys whose nonces have all expired are dropped once maxKeys is reached', () => {
    const spenders = new NonceSpenders({ maxPerIp: 10, maxPerNetwork: 10, maxKeys: 4 });
    spenders.record(caller('3.3.3.1', 'n1'), T0_MS + 10, T0_MS);
    spenders.record(caller('3.3.3.2', 'n2'), T0_MS + 10, T0_MS);
    assert.equal(spenders.size, 4);
    spenders.record(caller('3.3.3.3', 'n3'), T0_MS + 20 + TTL_MS, T0_MS + 20);
    assert.equal(spenders.size, 2);
  });
});
