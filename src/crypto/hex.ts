// Hex helpers. Pure; runs on any thread (main, shard actors, verify workers).
//
// Why not call @noble/hashes' hexToBytes directly: it throws on bad input, and hex here comes from clients
// (maker auth_response, wallet login), where a bad string is an expected operating error, not a bug.

import { bytesToHex as nobleBytesToHex, hexToBytes as nobleHexToBytes } from '@noble/hashes/utils.js';

// Lowercase `0x` only: `0X` is not a prefix any wallet emits, so accepting it would only widen the surface.
const HEX_BODY_RE = /^(?:[0-9a-fA-F]{2})*$/;

/** Strips one optional lowercase `0x` prefix. */
export function stripHexPrefix(hex: string): string {
  return hex.startsWith('0x') ? hex.slice(2) : hex;
}

/** Even-length hex (either case, optional `0x`) to bytes; null when the string is not exactly that. */
export function hexToBytes(hex: string): Uint8Array | null {
  if (typeof hex !== 'string') return null;
  const body = stripHexPrefix(hex);
  if (!HEX_BODY_RE.test(body)) return null;
  return nobleHexToBytes(body);
}

/** Bytes to lowercase hex, no `0x`. */
export function bytesToHex(bytes: Uint8Array): string {
  return nobleBytesToHex(bytes);
}
