// 65-byte Ethereum signatures (r || s || v): parsing client encodings and the checks every recovery backend
// shares, so native and noble accept exactly the same set. Pure; runs on any thread.

import { hexToBytes as constantBytes } from '@noble/hashes/utils.js';
import { hexToBytes } from './hex.js';

export const SIGNATURE_BYTES = 65;
const COMPACT_BYTES = 64;

// secp256k1 group order n and floor(n / 2), big-endian, compared bytewise to avoid a bigint per signature.
const CURVE_N = constantBytes('fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141');
const HALF_N = constantBytes('7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0');

const SIGNATURE_HEX_RE = /^(?:0x)?[0-9a-fA-F]{130}$/;
// 65 bytes are exactly 88 base64 chars with one '='. The char before '=' carries 2 unused bits that must be
// zero, else several strings would decode to one signature (canonical form only, as RFC 4648 section 3.5).
const SIGNATURE_BASE64_RE = /^[A-Za-z0-9+/]{86}[AEIMQUYcgkosw048]=$/;

/** 130 hex chars (optional `0x`, either case) to 65 bytes; null otherwise. Maker auth and wallet login. */
export function parseSignatureHex(s: unknown): Uint8Array | null {
  if (typeof s !== 'string' || !SIGNATURE_HEX_RE.test(s)) return null;
  return hexToBytes(s);
}

/** Strict standard base64 (padded, canonical) of exactly 65 bytes; null otherwise. order.signature. */
export function parseSignatureBase64(s: unknown): Uint8Array | null {
  if (typeof s !== 'string' || !SIGNATURE_BASE64_RE.test(s)) return null;
  // Copy out of Buffer's shared pool: a pooled view would drag its whole 8 KiB slab across a postMessage.
  const bytes = new Uint8Array(Buffer.from(s, 'base64'));
  return bytes.length === SIGNATURE_BYTES ? bytes : null;
}

export interface SplitSignature {
  /** r || s, a view into the input (no copy). */
  compact64: Uint8Array;
  recoveryId: 0 | 1;
}

/**
 * r || s and the recovery id. v must be 0/1 or 27/28 (contract section 7). Ids 2/3 (r >= n overflow, odds
 * about 2^-127) and EIP-155 chain-encoded v are refused: personal-sign never produces them.
 */
export function splitSignature(sig65: Uint8Array): SplitSignature | null {
  if (!(sig65 instanceof Uint8Array) || sig65.length !== SIGNATURE_BYTES) return null;
  const v = sig65[COMPACT_BYTES];
  let recoveryId: 0 | 1;
  if (v === 0 || v === 27) recoveryId = 0;
  else if (v === 1 || v === 28) recoveryId = 1;
  else return null;
  return { compact64: sig65.subarray(0, COMPACT_BYTES), recoveryId };
}

/** s > n/2. Such signatures are malleable twins of a low-s one; EIP-2 and ethers refuse them, and so do we. */
export function isHighS(compact64: Uint8Array): boolean {
  assertCompact(compact64);
  return compare32(compact64, 32, HALF_N) > 0;
}

/** 1 <= r < n and 1 <= s < n: outside that no valid signature exists, whatever the backend would say. */
export function hasScalarsInRange(compact64: Uint8Array): boolean {
  assertCompact(compact64);
  return isScalarInRange(compact64, 0) && isScalarInRange(compact64, 32);
}

function isScalarInRange(bytes: Uint8Array, offset: number): boolean {
  let isZero = true;
  for (let i = 0; i < 32; i++) {
    if (bytes[offset + i] !== 0) {
      isZero = false;
      break;
    }
  }
  return !isZero && compare32(bytes, offset, CURVE_N) < 0;
}

// Big-endian comparison of bytes[offset .. offset+32) with a 32-byte constant.
function compare32(bytes: Uint8Array, offset: number, constant: Uint8Array): number {
  for (let i = 0; i < 32; i++) {
    const a = bytes[offset + i] ?? 0;
    const b = constant[i] ?? 0;
    if (a !== b) return a < b ? -1 : 1;
  }
  return 0;
}

function assertCompact(compact64: Uint8Array): void {
  if (!(compact64 instanceof Uint8Array) || compact64.length !== COMPACT_BYTES) {
    throw new TypeError('compact signature must be 64 bytes');
  }
}
