// Main thread. Stateless login nonces (contract section 3). A challenge used to be an
// fsynced write per anonymous call: durable state any caller could grow. Now the nonce carries its own proof:
//
//   nonce = expiry (12 hex) || random (32 hex) || issuedMac (32 hex) || addressMac (32 hex)
//   issuedMac  = HMAC-SHA256(key, "issued", expiry, random)[0..16]
//   addressMac = HMAC-SHA256(key, "address", expiry, random, address)[0..16]
//
// 108 hex digits, which EIP-4361 allows (alphanumeric, 8 to 128 here). `issuedMac` proves this data
// directory issued the nonce, so its expiry can be trusted and it can be recorded as used (a login naming a
// nonce spends it, good or bad, contract section 3), even by a message that names another address:
// `addressMac` then tells the login it was not issued to that address. Nothing is stored at challenge time;
// what makes a nonce single-use is the record of *used* nonces (wallet-login.ts), kept until each expires.
// Recording only nonces with a good issuedMac matters: an expiry a caller made up could keep a record for
// ever.
//
// The key: 32 random bytes made once per data directory and kept in LMDB `meta` (store/data-key.ts), so nonces issued before a
// restart still work after it. (Deriving it from config would need a secret the operator must set; the
// admin token may be generated per start.) Whoever can read the data directory can mint nonces, but a nonce
// only lets its holder ask for a signature: logging in still needs the wallet's signature over the message.
import assert from 'node:assert/strict';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Store } from '../store/db.js';
import { loadOrCreateDataKey } from '../store/data-key.js';

const KEY_NAME = 'login-nonce-key:v1';
/** Domain separation: this key MACs login nonces and nothing else. */
const MAC_TAG = 'parlayd:siwe-nonce:v1';
const EXPIRY_HEX = 12; // 48 bits of ms: dates until the year 10889
const RANDOM_BYTES = 16;
const MAC_BYTES = 16; // 128 bits each: forging one is 2^128 guesses
export const LOGIN_NONCE_CHARS = EXPIRY_HEX + 2 * RANDOM_BYTES + 4 * MAC_BYTES;
const NONCE_RE = new RegExp(`^[0-9a-f]{${LOGIN_NONCE_CHARS}}$`);

/** The data directory's nonce key, made and stored on first use (one synchronous write, once, at start). */
export function loadOrCreateNonceKey(store: Store): Buffer {
  return loadOrCreateDataKey(store, KEY_NAME);
}

/** A nonce for `address` (lowercase 0x form) that expires at `expiresAtMs`. */
export function makeNonce(key: Buffer, address: string, expiresAtMs: number): string {
  assert.ok(Number.isSafeInteger(expiresAtMs) && expiresAtMs >= 0 && expiresAtMs < 16 ** EXPIRY_HEX, `nonce expiry ${expiresAtMs}`);
  const head = expiresAtMs.toString(16).padStart(EXPIRY_HEX, '0') + randomBytes(RANDOM_BYTES).toString('hex');
  return head + issuedMac(key, head).toString('hex') + addressMac(key, head, address).toString('hex');
}

export interface IssuedNonce {
  expiresAtMs: number;
  /** Whether it was issued to the address the login's message names. */
  isForAddress: boolean;
}

/** What a nonce this key issued says, checked against `address` (null when unknown); null for any other text. */
export function readNonce(key: Buffer, nonce: string, address: string | null): IssuedNonce | null {
  if (!NONCE_RE.test(nonce)) return null;
  const headChars = EXPIRY_HEX + 2 * RANDOM_BYTES;
  const head = nonce.slice(0, headChars);
  const issued = Buffer.from(nonce.slice(headChars, headChars + 2 * MAC_BYTES), 'hex');
  if (!timingSafeEqual(issued, issuedMac(key, head))) return null;
  const forAddress = Buffer.from(nonce.slice(headChars + 2 * MAC_BYTES), 'hex');
  return {
    expiresAtMs: parseInt(head.slice(0, EXPIRY_HEX), 16),
    isForAddress: address !== null && timingSafeEqual(forAddress, addressMac(key, head, address)),
  };
}

function issuedMac(key: Buffer, head: string): Buffer {
  return createHmac('sha256', key).update(`${MAC_TAG}:issued:${head}`).digest().subarray(0, MAC_BYTES);
}

function addressMac(key: Buffer, head: string, address: string): Buffer {
  return createHmac('sha256', key).update(`${MAC_TAG}:address:${head}:${address}`).digest().subarray(0, MAC_BYTES);
}
