// The key per-IP limits count a caller under (src/lib/caller-network.ts): an IPv4 address as itself, an
// IPv6 address by its /64, an IPv4 address mapped into IPv6 as the IPv4 address. The inputs are in the form
// uWebSockets.js gives (getRemoteAddressAsText, measured: "0000:0000:0000:0000:0000:ffff:7f00:0001" for
// 127.0.0.1 on a dual-stack listener, "0000:...:0001" for ::1) and in the compressed form.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { callerNetwork, callerWideNetwork } from '../../src/lib/caller-network.js';

describe('callerNetwork', () => {
  const cases: Array<[input: string, network: string]> = [
    ['127.0.0.1', '127.0.0.1'],
    ['203.0.113.9', '203.0.113.9'],
    ['0000:0000:0000:0000:0000:ffff:7f00:0001', '127.0.0.1'],
    ['::ffff:cb00:7109', '203.0.113.9'],
    ['0000:0000:0000:0000:0000:0000:0000:0001', '0:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['2001:0db8:85a3:0042:1000:8a2e:0370:7334', '2001:db8:85a3:42::/64'],
    ['2001:DB8:85A3:42::1', '2001:db8:85a3:42::/64'],
    ['2001:db8::', '2001:db8:0:0::/64'],
    ['fe80::1:2:3:4', 'fe80:0:0:0::/64'],
  ];
  for (const [input, network] of cases) {
    it(`${input} → ${network}`, () => assert.equal(callerNetwork(input), network));
  }

  it('one IPv6 host changing its last 64 bits stays one caller; the next /64 is another', () => {
    const host = (suffix: string) => callerNetwork(`2001:0db8:0001:0002:${suffix}`);
    assert.equal(host('0000:0000:0000:0001'), host('dead:beef:1234:5678'));
    assert.notEqual(callerNetwork('2001:db8:1:2::1'), callerNetwork('2001:db8:1:3::1'));
  });

  it('text that is not an address is its own key, never an error', () => {
    for (const text of ['', 'unknown', '1:2:3', '1::2::3', '1:2:3:4:5:6:7:8:9', 'g::1', '12345::1', '1:2:3:4:5:6:7::8']) {
      assert.equal(callerNetwork(text), text);
    }
  });
});

describe('callerWideNetwork (the per-network limit: IPv4 /24, IPv6 /48)', () => {
  const cases: Array<[input: string, network: string]> = [
    ['127.0.0.1', '127.0.0.0/24'],
    ['127.0.0.254', '127.0.0.0/24'],
    ['203.0.113.9', '203.0.113.0/24'],
    ['0000:0000:0000:0000:0000:ffff:7f00:0001', '127.0.0.0/24'],
    ['::ffff:cb00:7109', '203.0.113.0/24'],
    ['2001:0db8:85a3:0042:1000:8a2e:0370:7334', '2001:db8:85a3::/48'],
    ['2001:db8:85a3:ffff::1', '2001:db8:85a3::/48'],
    ['::1', '0:0:0::/48'],
  ];
  for (const [input, network] of cases) {
    it(`${input} → ${network}`, () => assert.equal(callerWideNetwork(input), network));
  }

  it('neighbouring blocks are other networks; text that is not an address is its own key', () => {
    assert.notEqual(callerWideNetwork('203.0.113.9'), callerWideNetwork('203.0.114.9'));
    assert.notEqual(callerWideNetwork('2001:db8:1::1'), callerWideNetwork('2001:db8:2::1'));
    for (const text of ['', 'unknown', '1.2.3', '1::2::3']) assert.equal(callerWideNetwork(text), text);
  });
});
