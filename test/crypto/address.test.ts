// Addresses, hex and the EIP-191 hash, checked against the EIP-55 examples and ethers as an independent
// implementation.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { computeAddress, getAddress, hashMessage, SigningKey } from 'ethers';
import { addressFromPublicKey, parseAddress, toChecksumAddress } from '../../src/crypto/address.js';
import { personalMessageHash } from '../../src/crypto/eip191.js';
import { bytesToHex, hexToBytes } from '../../src/crypto/hex.js';

// From EIP-55 itself: all-caps, all-lower and mixed-case checksummed examples.
const EIP55_EXAMPLES = [
  '0x52908400098527886E0F7030069857D2E4169EE7',
  '0x8617E340B3D01FA5F11F306F4090FD50E238070D',
  '0xde709f2102306220921060314715629080e2fb77',
  '0x27b1fdb04752bbc536007a920d24acb045561c26',
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
  '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
  '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
];
const VECTOR_SIGNER = '0x19E7E376E7C213B7E7e7e46cc70A5dD086DAff2A';

describe('hex', () => {
  it('hexToBytes accepts even-length hex of either case with an optional 0x', () => {
    assert.deepEqual(hexToBytes('0x00ff'), Uint8Array.of(0, 255));
    assert.deepEqual(hexToBytes('00FF'), Uint8Array.of(0, 255));
    assert.deepEqual(hexToBytes('0x'), new Uint8Array(0));
    assert.deepEqual(hexToBytes(''), new Uint8Array(0));
  });

  it('hexToBytes refuses odd length, non-hex, 0X and double prefixes', () => {
    for (const bad of ['0', '0x0', 'zz', '0X00', '0x0x00', ' 00', '00 ', '0-']) assert.equal(hexToBytes(bad), null, bad);
  });

  it('bytesToHex is lowercase without 0x', () => {
    assert.equal(bytesToHex(Uint8Array.of(0xab, 0x01)), 'ab01');
  });
});

describe('parseAddress', () => {
  it('accepts every EIP-55 example and returns the lowercase 0x form', () => {
    for (const addr of EIP55_EXAMPLES) assert.equal(parseAddress(addr), addr.toLowerCase(), addr);
  });

  it('accepts with or without 0x, all-lower and all-upper hex', () => {
    const lower = VECTOR_SIGNER.toLowerCase();
    assert.equal(parseAddress(VECTOR_SIGNER), lower);
    assert.equal(parseAddress(VECTOR_SIGNER.slice(2)), lower);
    assert.equal(parseAddress(lower.slice(2)), lower);
    assert.equal(parseAddress('0x' + lower.slice(2).toUpperCase()), lower);
  });

  it('refuses mixed case that fails the EIP-55 checksum', () => {
    const flipped = VECTOR_SIGNER.replace('E7E376', 'e7E376');
    assert.notEqual(flipped, VECTOR_SIGNER);
    assert.equal(parseAddress(flipped), null);
    assert.equal(parseAddress('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD'), null);
  });

  it('refuses wrong length, non-hex, 0X prefix and non-strings', () => {
    const body = VECTOR_SIGNER.slice(2).toLowerCase();
    for (const bad of [body.slice(1), body + '0', '0X' + body, '0x' + body.slice(1) + 'g', ` ${body}`, '']) {
      assert.equal(parseAddress(bad), null, bad);
    }
    for (const bad of [null, undefined, 42, {}, [body]]) assert.equal(parseAddress(bad), null);
  });

  it('agrees with ethers getAddress on 200 random addresses in every case form', () => {
    for (let i = 0; i < 200; i++) {
      const lower = '0x' + randomBytes(20).toString('hex');
      const checksummed = getAddress(lower);
      assert.equal(toChecksumAddress(lower), checksummed);
      assert.equal(parseAddress(checksummed), lower);
      assert.equal(parseAddress(lower.toUpperCase().replace('0X', '0x')), lower);
    }
  });
});

describe('toChecksumAddress', () => {
  it('reproduces the EIP-55 examples from any case', () => {
    for (const addr of EIP55_EXAMPLES.slice(4)) {
      assert.equal(toChecksumAddress(addr.toLowerCase()), addr);
      assert.equal(toChecksumAddress(addr.slice(2).toUpperCase()), addr);
    }
  });

  it('throws on an invalid address (a programmer error: callers parse first)', () => {
    assert.throws(() => toChecksumAddress('0x1234'));
  });
});

describe('addressFromPublicKey', () => {
  it('derives the vector signer from its key', () => {
    const key = new SigningKey('0x' + '11'.repeat(32));
    const publicKey = hexToBytes(key.publicKey);
    assert.ok(publicKey !== null);
    assert.equal(addressFromPublicKey(publicKey), VECTOR_SIGNER.toLowerCase());
  });

  it('agrees with ethers computeAddress on 50 random keys', () => {
    for (let i = 0; i < 50; i++) {
      const key = new SigningKey(randomBytes(32));
      const publicKey = hexToBytes(key.publicKey);
      assert.ok(publicKey !== null);
      assert.equal(addressFromPublicKey(publicKey), computeAddress(key).toLowerCase());
    }
  });

  it('refuses a compressed or short key', () => {
    assert.throws(() => addressFromPublicKey(new Uint8Array(33)));
    assert.throws(() => addressFromPublicKey(new Uint8Array(65)));
  });
});

describe('personalMessageHash', () => {
  it('equals ethers hashMessage for binary messages of many lengths', () => {
    for (const length of [0, 1, 9, 10, 60, 75, 99, 100, 123, 1000]) {
      const message = randomBytes(length);
      assert.equal('0x' + bytesToHex(personalMessageHash(message)), hashMessage(message), `length ${length}`);
    }
  });
});
