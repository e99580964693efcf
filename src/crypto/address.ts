// EVM addresses: parsing client input, EIP-55 checksums, and deriving an address from a public key.
// Pure; runs on any thread (verify workers derive addresses after recovery).
//
// Canonical form inside parlayd is lowercase `0x` + 40 hex (contract section 1). EIP-55 mixed case is only
// produced for display and for SIWE messages, which require it (EIP-4361).

import assert from 'node:assert/strict';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

const ADDRESS_BODY_RE = /^[0-9a-fA-F]{40}$/;
const HAS_LOWER_RE = /[a-f]/;
const HAS_UPPER_RE = /[A-F]/;

/**
 * Client address to canonical lowercase `0x` form, or null. Accepts with/without `0x`, all-lower or
 * all-upper hex, and mixed case only when it is the EIP-55 checksum: mixed case that fails the checksum is
 * most likely a typo, and accepting it would send money to a wrong but valid-looking address.
 */
export function parseAddress(input: unknown): string | null {
  if (typeof input !== 'string') return null;
  const body = input.startsWith('0x') ? input.slice(2) : input;
  if (!ADDRESS_BODY_RE.test(body)) return null;
  const lower = body.toLowerCase();
  const isMixedCase = HAS_LOWER_RE.test(body) && HAS_UPPER_RE.test(body);
  if (isMixedCase && checksumBody(lower) !== body) return null;
  return '0x' + lower;
}

/** EIP-55 checksum form (`0x` + mixed case) of any address `parseAddress` accepts. */
export function toChecksumAddress(addr: string): string {
  const canonical = parseAddress(addr);
  assert.ok(canonical !== null, 'toChecksumAddress: not a valid address');
  return '0x' + checksumBody(canonical.slice(2));
}

/** Lowercase `0x` address of an uncompressed (0x04-prefixed, 65-byte) secp256k1 public key. */
export function addressFromPublicKey(uncompressed65: Uint8Array): string {
  assert.ok(uncompressed65 instanceof Uint8Array && uncompressed65.length === 65, 'public key must be 65 bytes');
  assert.equal(uncompressed65[0], 0x04, 'public key must be uncompressed (0x04 prefix)');
  // The address is the last 20 bytes of keccak256(X || Y), i.e. of the key without its 0x04 prefix.
  const digest = keccak_256(uncompressed65.subarray(1));
  return '0x' + bytesToHex(digest.subarray(12));
}

// EIP-55: uppercase the hex letter at position i when nibble i of keccak256(lowercase ascii hex) is >= 8.
function checksumBody(lower40: string): string {
  const digest = keccak_256(utf8ToBytes(lower40));
  let out = '';
  for (let i = 0; i < 40; i++) {
    const ch = lower40.charAt(i);
    const byte = digest[i >> 1] ?? 0;
    const nibble = i % 2 === 0 ? byte >> 4 : byte & 0x0f;
    out += nibble >= 8 ? ch.toUpperCase() : ch;
  }
  return out;
}
