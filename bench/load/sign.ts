// Load generator, any thread. Client-side keys and EIP-191 personal-sign for benchmark wallets, makers and
// signed orders. libsecp256k1 (the `secp256k1` addon) signs when it loads, @noble/curves otherwise: on a
// 2-core machine the client shares the cores with the server, so client signing should cost as little as
// it can (and orders are signed before a run starts: signing is the client's cost, not the service's).
import { createRequire } from 'node:module';
import { randomBytes } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';
import { addressFromPublicKey, toChecksumAddress } from '../../src/crypto/address.js';
import { personalMessageHash } from '../../src/crypto/eip191.js';
import { bytesToHex } from '../../src/crypto/hex.js';

interface NativeSign {
  ecdsaSign(msg32: Uint8Array, key: Uint8Array): { signature: Uint8Array; recid: number };
}

const native = loadNative();
export const signBackend: 'native' | 'noble' = native === null ? 'noble' : 'native';

function loadNative(): NativeSign | null {
  try {
    return createRequire(import.meta.url)('secp256k1/bindings') as NativeSign;
  } catch {
    return null;
  }
}

export interface BenchWallet {
  privateKey: Uint8Array;
  /** Lowercase `0x`. */
  address: string;
  /** EIP-55. */
  checksumAddress: string;
}

export function randomWallet(): BenchWallet {
  let key = randomBytes(32);
  while (!secp256k1.utils.isValidSecretKey(key)) key = randomBytes(32);
  const address = addressFromPublicKey(secp256k1.getPublicKey(key, false));
  return { privateKey: new Uint8Array(key), address, checksumAddress: toChecksumAddress(address) };
}

/** EIP-191 personal-sign of `message`: 65 bytes r || s || v, v = 27/28. */
export function personalSign(privateKey: Uint8Array, message: Uint8Array | string): Uint8Array {
  const bytes = typeof message === 'string' ? utf8ToBytes(message) : message;
  const hash = personalMessageHash(bytes);
  const out = new Uint8Array(65);
  if (native !== null) {
    const { signature, recid } = native.ecdsaSign(hash, privateKey);
    out.set(signature, 0);
    out[64] = 27 + recid;
    return out;
  }
  // 'recovered' is recovery id || r || s (noble v2); prehash false: the hash above is what is signed.
  const recovered = secp256k1.sign(hash, privateKey, { prehash: false, format: 'recovered' });
  out.set(recovered.subarray(1), 0);
  out[64] = 27 + (recovered[0] ?? 0);
  return out;
}

export const signatureHex = (sig65: Uint8Array) => '0x' + bytesToHex(sig65);
export const signatureBase64 = (sig65: Uint8Array) => Buffer.from(sig65).toString('base64');
