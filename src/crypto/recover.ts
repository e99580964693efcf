// Signer recovery for EIP-191 personal-sign signatures. Pure and synchronous; runs on whichever thread calls
// it: the verify workers (verify-pool.ts) on the request path, the main thread in tests and benchmarks.
//
// Two backends, one contract: libsecp256k1 through the `secp256k1` native addon when its prebuild loads
// (several times faster), @noble/curves otherwise. Both sit behind the same input checks (signature.ts), so
// they accept and refuse exactly the same signatures; the tests compare them on vectors and random keys.

import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { addressFromPublicKey } from './address.js';
import { personalMessageHash } from './eip191.js';
import { hasScalarsInRange, isHighS, splitSignature, type SplitSignature } from './signature.js';

export type RecoverFailure = 'MALFORMED' | 'HIGH_S' | 'UNRECOVERABLE';
export type RecoverResult = { ok: true; address: string } | { ok: false; reason: RecoverFailure };

export type RecoverFn = (hash32: Uint8Array, sig65: Uint8Array) => RecoverResult;

/** The slice of the `secp256k1` addon we call; checked at load rather than trusted from its typings. */
interface NativeSecp256k1 {
  ecdsaRecover(sig: Uint8Array, recid: number, msg32: Uint8Array, compressed: boolean): Uint8Array;
}

const HASH_BYTES = 32;

/** noble backend; always available. */
export function recoverAddressNoble(hash32: Uint8Array, sig65: Uint8Array): RecoverResult {
  return recoverWith(hash32, sig65, recoverPublicKeyNoble);
}

const nativeBinding = loadNativeBinding();

/** libsecp256k1 backend; null when the native addon did not load on this machine. */
export const recoverAddressNative: RecoverFn | null =
  nativeBinding === null ? null : (hash32, sig65) => recoverWith(hash32, sig65, (sig, h) => recoverPublicKeyNative(nativeBinding, sig, h));

export const recoverBackend: 'native' | 'noble' = recoverAddressNative === null ? 'noble' : 'native';

/** Recovers the lowercase `0x` address that signed a 32-byte hash, with the fastest backend that loaded. */
export const recoverAddress: RecoverFn = recoverAddressNative ?? recoverAddressNoble;

/** Recovers the EIP-191 personal-sign signer of `message` (order bytes, maker challenge, SIWE text). */
export function recoverPersonalSigner(message: Uint8Array, sig65: Uint8Array): RecoverResult {
  return recoverAddress(personalMessageHash(message), sig65);
}

// The shared policy: shape, v, scalar range and low-s are decided here, not by a backend, so a backend
// difference can never become an accept/refuse difference.
function recoverWith(
  hash32: Uint8Array,
  sig65: Uint8Array,
  recoverPublicKey: (sig: SplitSignature, hash32: Uint8Array) => Uint8Array | null,
): RecoverResult {
  // The hash is computed by our own code, so a wrong one is a bug; the signature comes from a client.
  assert.ok(hash32 instanceof Uint8Array && hash32.length === HASH_BYTES, 'hash must be 32 bytes');
  const sig = splitSignature(sig65);
  if (sig === null || !hasScalarsInRange(sig.compact64)) return { ok: false, reason: 'MALFORMED' };
  if (isHighS(sig.compact64)) return { ok: false, reason: 'HIGH_S' };
  const publicKey = recoverPublicKey(sig, hash32);
  if (publicKey === null) return { ok: false, reason: 'UNRECOVERABLE' };
  return { ok: true, address: addressFromPublicKey(publicKey) };
}

function recoverPublicKeyNoble(sig: SplitSignature, hash32: Uint8Array): Uint8Array | null {
  try {
    const point = secp256k1.Signature.fromBytes(sig.compact64, 'compact').addRecoveryBit(sig.recoveryId).recoverPublicKey(hash32);
    return point.toBytes(false);
  } catch {
    // noble throws when r is not the x of a curve point or the result is the point at infinity: both are
    // "no signer", an expected outcome for client input, not an error to propagate.
    return null;
  }
}

function recoverPublicKeyNative(binding: NativeSecp256k1, sig: SplitSignature, hash32: Uint8Array): Uint8Array | null {
  try {
    return binding.ecdsaRecover(sig.compact64, sig.recoveryId, hash32, false);
  } catch {
    // The addon throws for the same "no signer" cases (recover failure); inputs were range-checked above.
    return null;
  }
}

// `secp256k1`'s package index silently falls back to the elliptic JS implementation, slower than noble, so
// the native bindings are required directly and noble is our fallback instead.
function loadNativeBinding(): NativeSecp256k1 | null {
  try {
    const loaded: unknown = createRequire(import.meta.url)('secp256k1/bindings');
    return isNativeSecp256k1(loaded) ? loaded : null;
  } catch {
    return null;
  }
}

function isNativeSecp256k1(value: unknown): value is NativeSecp256k1 {
  return typeof value === 'object' && value !== null && typeof Reflect.get(value, 'ecdsaRecover') === 'function';
}
