// The order signing bytes: the signing vectors byte for byte, round trips, refusals, and the exact
// min_odds -> odds_e4 conversion the bytes depend on.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bytesToHex, hexToBytes } from '../../src/crypto/hex.js';
// The vectors go through admission's own reading of an order (canonical address, exact odds, FOK by default).
import { toSignableOrder } from '../../src/rfq/admission.js';
import { decodeOrder, e4ToOdds, encodeOrder, oddsToE4, type SignableOrder } from '../../src/contract/order-codec.js';
import { ODDS_MAX, isQuoteOdds, quoteOddsE4 } from '../../src/contract/mm.js';
import { signingVectors as vectors } from '../helpers/vectors.js';

function sampleOrder(): SignableOrder {
  const first = vectors.orders[1];
  assert.ok(first !== undefined);
  return toSignableOrder(first.order);
}

describe('encodeOrder: signing vectors', () => {
  vectors.orders.forEach((v, i) => {
    it(`order ${i} encodes to exactly bytes_hex (${v.bytes_len} bytes) and decodes back`, () => {
      const signable = toSignableOrder(v.order);
      assert.equal(signable.minOddsE4, v.min_odds_e4);
      assert.equal(signable.orderType, v.order_type_signed);
      const bytes = encodeOrder(signable);
      assert.equal(bytes.length, v.bytes_len);
      assert.equal(bytes.length, 51 + 9 * signable.legs.length);
      assert.equal(bytesToHex(bytes), v.bytes_hex);
      assert.deepEqual(decodeOrder(bytes), signable);
    });
  });
});

describe('encodeOrder / decodeOrder', () => {
  it('round-trips the extremes: 2^53-1 values, 8 legs, u32 max odds, both flags', () => {
    const max = Number.MAX_SAFE_INTEGER;
    const order: SignableOrder = {
      user: '0x' + 'ff'.repeat(20),
      wagerMicros: max,
      minOddsE4: 0xffff_ffff,
      nonce: max,
      expiresAtMs: max,
      orderType: 1,
      shieldOn: true,
      legs: Array.from({ length: 8 }, (_, i) => ({ marketId: max - i, direction: i % 2 === 0 ? 'down' : 'up' })),
    };
    assert.deepEqual(decodeOrder(encodeOrder(order)), order);
    const zeroish: SignableOrder = {
      ...order,
      user: '0x' + '00'.repeat(20),
      wagerMicros: 0,
      nonce: 0,
      expiresAtMs: 0,
      minOddsE4: 1,
      orderType: 2,
      shieldOn: false,
      legs: [{ marketId: 0, direction: 'up' }],
    };
    assert.deepEqual(decodeOrder(encodeOrder(zeroish)), zeroish);
  });

  it('decodes a view at an offset inside a larger buffer', () => {
    const bytes = encodeOrder(sampleOrder());
    const big = new Uint8Array(bytes.length + 7);
    big.set(bytes, 7);
    assert.deepEqual(decodeOrder(big.subarray(7)), sampleOrder());
  });

  it('decodeOrder refuses bytes encodeOrder cannot produce', () => {
    const good = encodeOrder(sampleOrder());
    const mutate = (at: number, value: number): Uint8Array => {
      const copy = good.slice();
      copy[at] = value;
      return copy;
    };
    const cases: Array<[string, Uint8Array]> = [
      ['empty', new Uint8Array(0)],
      ['header only', good.subarray(0, 51)],
      ['one byte short', good.subarray(0, good.length - 1)],
      ['one byte long', Uint8Array.of(...good, 0)],
      ['leg_count 0', mutate(50, 0)],
      ['leg_count 9', mutate(50, 9)],
      ['order_type 0', mutate(48, 0)],
      ['order_type 3', mutate(48, 3)],
      ['shield_on 2', mutate(49, 2)],
      ['direction 2', mutate(51 + 8, 2)],
      ['wager above 2^53-1', mutate(26, 0x20)],
      [
        'nonce 2^64-1',
        (() => {
          const c = good.slice();
          c.fill(0xff, 32, 40);
          return c;
        })(),
      ],
      ['market_id above 2^53-1', mutate(51 + 6, 0x20)],
      [
        'min_odds 0',
        (() => {
          const c = good.slice();
          c.fill(0, 28, 32);
          return c;
        })(),
      ],
    ];
    for (const [label, bytes] of cases) assert.equal(decodeOrder(bytes), null, label);
  });

  it('encodeOrder asserts: unvalidated input is a programmer error', () => {
    const base = sampleOrder();
    const bad: Array<[string, SignableOrder]> = [
      ['checksummed user', { ...base, user: '0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A' }],
      ['user without 0x', { ...base, user: base.user.slice(2) }],
      ['no legs', { ...base, legs: [] }],
      ['9 legs', { ...base, legs: Array.from({ length: 9 }, (_, i) => ({ marketId: i + 1, direction: 'up' as const })) }],
      ['fractional wager', { ...base, wagerMicros: 1.5 }],
      ['negative nonce', { ...base, nonce: -1 }],
      ['unsafe expiry', { ...base, expiresAtMs: 2 ** 53 }],
      ['odds e4 0', { ...base, minOddsE4: 0 }],
      ['odds e4 above u32', { ...base, minOddsE4: 2 ** 32 }],
      ['order type 3', { ...base, orderType: 3 as unknown as 1 }],
      ['direction sideways', { ...base, legs: [{ marketId: 1, direction: 'sideways' as unknown as 'up' }] }],
    ];
    for (const [label, order] of bad) assert.throws(() => encodeOrder(order), label);
  });
});

describe('oddsToE4', () => {
  const table: Array<[number, number | null]> = [
    [1.01, 10100],
    [1.15, 11500], // 1.15 * 10000 = 11499.999999999998 in floating point
    [3.1416, 31416],
    [2.675, 26750],
    [1.005, 10050],
    [4.35, 43500], // 4.35 * 10000 = 43499.99999999999
    [1.00005, 10001], // fifth decimal 5 rounds half-up
    [1.00004, 10000],
    [1.000049999, 10000],
    [2.67505, 26751],
    [1, 10000],
    [100, 1_000_000],
    [0.0001, 1],
    [0.00005, 1],
    [0.00004, null], // rounds to 0
    [1e-7, null],
    [429496.7295, 0xffff_ffff],
    [429496.72954, 0xffff_ffff],
    [429496.72955, null], // rounds to 2^32
    [429496.7296, null],
    [1e21, null],
    [1.5e300, null],
    [0, null],
    [-0, null],
    [-1, null],
    [Number.NaN, null],
    [Number.POSITIVE_INFINITY, null],
    [Number.NEGATIVE_INFINITY, null],
  ];
  for (const [odds, expected] of table) {
    it(`${String(odds)} -> ${String(expected)}`, () => assert.equal(oddsToE4(odds), expected));
  }

  it('refuses non-numbers', () => {
    assert.equal(oddsToE4('1.15' as unknown as number), null);
  });

  it('is the exact inverse of e4ToOdds for 20 000 values across the u32 range', () => {
    for (let i = 0; i < 20_000; i++) {
      const e4 = i < 10_000 ? i + 1 : 1 + Math.floor(Math.random() * 0xffff_fffe);
      assert.equal(oddsToE4(e4ToOdds(e4)), e4, `e4=${e4}`);
    }
  });
});

describe('quoteOddsE4 (the quote path after its schema check, issue 35)', () => {
  it('equals oddsToE4 for every odds the quote schema lets through: all of (1, 50] and 100 000 more up to ODDS_MAX', () => {
    const check = (e4: number) => {
      // The number JSON.parse makes of the maker's 4-decimal text.
      const odds = JSON.parse(String(e4 / 10_000)) as number;
      assert.ok(isQuoteOdds(odds), `e4=${e4}`);
      assert.equal(quoteOddsE4(odds), oddsToE4(odds), `e4=${e4}`);
      assert.equal(quoteOddsE4(odds), e4, `e4=${e4}`);
    };
    for (let e4 = 10_001; e4 <= 500_000; e4++) check(e4);
    for (let i = 0; i < 100_000; i++) check(10_001 + Math.floor(Math.random() * (ODDS_MAX * 10_000 - 10_000)));
    check(ODDS_MAX * 10_000);
  });
});

describe('e4ToOdds', () => {
  it('gives the 4-decimal number a client would write', () => {
    assert.equal(e4ToOdds(11500), 1.15);
    assert.equal(e4ToOdds(31416), 3.1416);
    assert.equal(String(e4ToOdds(10001)), '1.0001');
  });

  it('asserts on a non-u32 input', () => {
    for (const bad of [-1, 1.5, 2 ** 32, Number.NaN]) assert.throws(() => e4ToOdds(bad));
  });
});

// Guards the test data itself: a typo in the hex helper would make every vector test vacuous.
describe('test data', () => {
  it('vectors decode to the byte lengths they state', () => {
    for (const v of vectors.orders) assert.equal(hexToBytes(v.bytes_hex)?.length, v.bytes_len);
  });
});
