// Signer recovery: the signing vectors (made by ethers, an independent signer), the maker challenge, the
// refusal rules (high-s, v, scalar range) and native/noble agreement on random keys.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { Wallet } from 'ethers';
import { personalMessageHash } from '../../src/crypto/eip191.js';
import { bytesToHex, hexToBytes } from '../../src/crypto/hex.js';
import { assertDomainTag, buildMakerChallenge, isValidDomainTag } from '../../src/crypto/maker-challenge.js';
import {
  recoverAddress,
  recoverAddressNative,
  recoverAddressNoble,
  recoverBackend,
  recoverPersonalSigner,
  type RecoverResult,
} from '../../src/crypto/recover.js';
import { isHighS, parseSignatureBase64, parseSignatureHex, splitSignature } from '../../src/crypto/signature.js';
import { signingVectors as vectors } from '../helpers/vectors.js';

const SIGNER = vectors.signer_address.toLowerCase();
const CURVE_N = secp256k1.Point.CURVE().n;

type Backend = (hash32: Uint8Array, sig65: Uint8Array) => RecoverResult;
const BACKENDS: Array<[string, Backend]> = [['noble', recoverAddressNoble]];
if (recoverAddressNative !== null) BACKENDS.push(['native', recoverAddressNative]);

function mustHex(hex: string): Uint8Array {
  const bytes = hexToBytes(hex);
  assert.ok(bytes !== null, `bad hex in test data: ${hex}`);
  return bytes;
}

function mustSig(sig: Uint8Array | null): Uint8Array {
  assert.ok(sig !== null, 'signature did not parse');
  return sig;
}

function bigintTo32(value: bigint): Uint8Array {
  return mustHex(value.toString(16).padStart(64, '0'));
}

function withScalars(sig65: Uint8Array, r: bigint, s: bigint, v: number): Uint8Array {
  const out = new Uint8Array(65);
  out.set(bigintTo32(r), 0);
  out.set(bigintTo32(s), 32);
  out[64] = v;
  return out;
}

function scalarsOf(sig65: Uint8Array): { r: bigint; s: bigint; v: number } {
  return {
    r: BigInt('0x' + bytesToHex(sig65.subarray(0, 32))),
    s: BigInt('0x' + bytesToHex(sig65.subarray(32, 64))),
    v: sig65[64] ?? -1,
  };
}

function assertAllBackends(hash32: Uint8Array, sig65: Uint8Array, expected: RecoverResult, label: string): void {
  for (const [name, recover] of BACKENDS) assert.deepEqual(recover(hash32, sig65), expected, `${name}: ${label}`);
}

describe('recovery backends', () => {
  it('the native backend loads on linux-x64 (a prebuild ships for it)', (t) => {
    if (process.platform !== 'linux' || process.arch !== 'x64') return t.skip('no prebuild for this platform');
    assert.equal(recoverBackend, 'native');
    assert.ok(recoverAddressNative !== null);
    assert.equal(recoverAddress, recoverAddressNative);
  });

  it('recoverPersonalSigner is recoverAddress over the EIP-191 hash', () => {
    const order = vectors.orders[0];
    assert.ok(order !== undefined);
    const message = mustHex(order.bytes_hex);
    const sig = mustSig(parseSignatureBase64(order.signature_base64));
    assert.deepEqual(recoverPersonalSigner(message, sig), recoverAddress(personalMessageHash(message), sig));
    assert.deepEqual(recoverPersonalSigner(message, sig), { ok: true, address: SIGNER });
  });
});

describe('signing vectors', () => {
  vectors.orders.forEach((order, i) => {
    it(`order ${i}: base64, hex v27 and hex v0 signatures all recover the signer with every backend`, () => {
      const hash = personalMessageHash(mustHex(order.bytes_hex));
      const encodings: Array<[string, Uint8Array | null]> = [
        ['base64', parseSignatureBase64(order.signature_base64)],
        ['hex v27', parseSignatureHex(order.signature_hex_v27)],
        ['hex v0', parseSignatureHex(order.signature_hex_v0)],
        ['0x hex v27', parseSignatureHex('0x' + order.signature_hex_v27)],
      ];
      for (const [label, sig] of encodings) {
        assertAllBackends(hash, mustSig(sig), { ok: true, address: SIGNER }, label);
      }
    });
  });

  it('maker challenge: buildMakerChallenge equals the vector bytes and its signature recovers the signer', () => {
    const c = vectors.maker_challenge;
    const bytes = buildMakerChallenge(c.domain_tag, mustHex(c.nonce_hex), c.timestamp);
    assert.equal(bytes.length, 75);
    assert.equal(bytesToHex(bytes), c.bytes_hex);
    assertAllBackends(
      personalMessageHash(bytes),
      mustSig(parseSignatureHex(c.signature_hex)),
      {
        ok: true,
        address: SIGNER,
      },
      'maker challenge',
    );
  });
});

describe('maker challenge', () => {
  it('a domain tag is exactly 35 printable ASCII bytes', () => {
    assert.equal(isValidDomainTag('parlayd:mm:ws-auth:v1:localhost.dev'), true);
    for (const bad of [
      'parlayd:mm:ws-auth:v1:localhost.de',
      'parlayd:mm:ws-auth:v1:localhost.devv',
      'parlayd:mm:ws-auth:v1:localhost.dé',
      'parlayd:mm:ws-auth:v1:localhost\n.d',
      42,
    ]) {
      assert.equal(isValidDomainTag(bad), false, String(bad));
      assert.throws(() => assertDomainTag(bad));
    }
  });

  it('refuses a nonce that is not 32 bytes and a timestamp that is not a safe non-negative integer', () => {
    const tag = vectors.maker_challenge.domain_tag;
    assert.throws(() => buildMakerChallenge(tag, new Uint8Array(31), 1));
    assert.throws(() => buildMakerChallenge(tag, new Uint8Array(32), -1));
    assert.throws(() => buildMakerChallenge(tag, new Uint8Array(32), 1.5));
    assert.throws(() => buildMakerChallenge(tag, new Uint8Array(32), 2 ** 53));
  });
});

describe('signature parsing', () => {
  const order = vectors.orders[0];
  assert.ok(order !== undefined);

  it('base64 must be canonical, padded, standard alphabet, exactly 65 bytes', () => {
    const good = order.signature_base64;
    assert.equal(parseSignatureBase64(good)?.length, 65);
    const sixtyFour = Buffer.alloc(64, 1).toString('base64');
    const sixtySix = Buffer.alloc(66, 1).toString('base64');
    // The char before '=' carries 2 unused bits; a non-zero value decodes to the same bytes in lax decoders.
    const lastData = good.charAt(86);
    const nonCanonical = good.slice(0, 86) + String.fromCharCode(lastData.charCodeAt(0) + 1) + '=';
    for (const bad of [
      good.slice(0, -1),
      sixtyFour,
      sixtySix,
      nonCanonical,
      good.replace(/\+/g, '-').replace(/\//g, '_'),
      ` ${good}`,
      `${good}\n`,
      good + '==',
    ]) {
      assert.equal(parseSignatureBase64(bad), null, bad);
    }
    assert.equal(parseSignatureBase64(42), null);
  });

  it('hex must be 130 hex chars with an optional 0x', () => {
    const good = order.signature_hex_v27;
    assert.equal(parseSignatureHex(good.toUpperCase())?.length, 65);
    for (const bad of [good.slice(2), good + '00', '0X' + good, good.slice(0, -1) + 'g']) {
      assert.equal(parseSignatureHex(bad), null, bad);
    }
    assert.equal(parseSignatureHex(undefined), null);
  });

  it('splitSignature accepts v in {0, 1, 27, 28} only', () => {
    const sig = mustSig(parseSignatureHex(order.signature_hex_v27));
    const expected = new Map([
      [0, 0],
      [1, 1],
      [27, 0],
      [28, 1],
    ]);
    for (let v = 0; v < 256; v++) {
      const copy = sig.slice();
      copy[64] = v;
      assert.equal(splitSignature(copy)?.recoveryId, expected.get(v), `v=${v}`);
    }
    assert.equal(splitSignature(sig.subarray(0, 64)), null);
  });

  it('isHighS is true exactly above n/2', () => {
    const halfN = CURVE_N / 2n;
    const compactWithS = (s: bigint): Uint8Array => withScalars(new Uint8Array(65), 1n, s, 27).subarray(0, 64);
    assert.equal(isHighS(compactWithS(halfN)), false);
    assert.equal(isHighS(compactWithS(halfN + 1n)), true);
    assert.equal(isHighS(compactWithS(CURVE_N - 1n)), true);
    assert.equal(isHighS(compactWithS(1n)), false);
  });
});

describe('refused signatures', () => {
  const order = vectors.orders[1];
  assert.ok(order !== undefined);
  const hash = personalMessageHash(mustHex(order.bytes_hex));
  const sig = mustSig(parseSignatureHex(order.signature_hex_v27));
  const { r, s, v } = scalarsOf(sig);

  it('the high-s twin (s -> n - s, v flipped) is refused with HIGH_S although it is mathematically valid', () => {
    const twin = withScalars(sig, r, CURVE_N - s, v === 27 ? 28 : 27);
    // Proof that the twin is the malleable copy, not garbage: noble without the low-s rule recovers the signer.
    const twinPoint = new secp256k1.Signature(r, CURVE_N - s, v === 27 ? 1 : 0).recoverPublicKey(hash);
    assert.equal(
      bytesToHex(twinPoint.toBytes(false)),
      bytesToHex(new secp256k1.Signature(r, s, v - 27).recoverPublicKey(hash).toBytes(false)),
    );
    assertAllBackends(hash, twin, { ok: false, reason: 'HIGH_S' }, 'high-s twin');
    const twinV0 = twin.slice();
    twinV0[64] = (twinV0[64] ?? 0) - 27;
    assertAllBackends(hash, twinV0, { ok: false, reason: 'HIGH_S' }, 'high-s twin, v 0/1');
  });

  it('v = 2, 29, 26 and 255 are MALFORMED', () => {
    for (const badV of [2, 29, 26, 255]) {
      assertAllBackends(hash, withScalars(sig, r, s, badV), { ok: false, reason: 'MALFORMED' }, `v=${badV}`);
    }
  });

  it('r or s of zero, r >= n and a wrong length are MALFORMED', () => {
    const cases: Array<[string, Uint8Array]> = [
      ['r = 0', withScalars(sig, 0n, s, v)],
      ['s = 0', withScalars(sig, r, 0n, v)],
      ['r = n', withScalars(sig, CURVE_N, s, v)],
      ['r = 2^256 - 1', withScalars(sig, 2n ** 256n - 1n, s, v)],
      ['64 bytes', sig.subarray(0, 64)],
      ['66 bytes', Uint8Array.of(...sig, 0)],
    ];
    for (const [label, bad] of cases) assertAllBackends(hash, bad, { ok: false, reason: 'MALFORMED' }, label);
  });

  it('an r that is no curve x-coordinate is UNRECOVERABLE', () => {
    let badR = 1n;
    while (isCurveX(badR)) badR++;
    assertAllBackends(hash, withScalars(sig, badR, s, v), { ok: false, reason: 'UNRECOVERABLE' }, `r=${badR}`);
  });

  it('a tampered message recovers a different address', () => {
    const tampered = mustHex(order.bytes_hex);
    tampered[20] = (tampered[20] ?? 0) ^ 1; // one bit of wager_micros
    for (const [name, recover] of BACKENDS) {
      const result = recover(personalMessageHash(tampered), sig);
      assert.ok(!result.ok || result.address !== SIGNER, name);
    }
  });

  it('a hash that is not 32 bytes is a programmer error and throws', () => {
    for (const [, recover] of BACKENDS) assert.throws(() => recover(new Uint8Array(31), sig));
  });
});

describe('native and noble agree with ethers', () => {
  it('200 random keys and messages signed by ethers Wallet.signMessage recover identically', async () => {
    for (let i = 0; i < 200; i++) {
      const wallet = new Wallet('0x' + randomBytes(32).toString('hex'));
      const message = randomBytes(1 + (i % 150));
      const sig = mustSig(parseSignatureHex(await wallet.signMessage(message)));
      const expected: RecoverResult = { ok: true, address: wallet.address.toLowerCase() };
      assertAllBackends(personalMessageHash(message), sig, expected, `case ${i}`);
      assert.deepEqual(recoverPersonalSigner(message, sig), expected);
    }
  });
});

function isCurveX(x: bigint): boolean {
  try {
    secp256k1.Point.fromHex('02' + x.toString(16).padStart(64, '0'));
    return true;
  } catch {
    return false;
  }
}
