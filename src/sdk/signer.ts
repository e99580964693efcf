// Maker SDK: signing the 75-byte challenge (interface.md "Market-maker WebSocket flow"). Pure; runs in the
// maker's process. A private key is used through @noble/curves (RFC 6979 deterministic, low-s); any other
// signer (an ethers Wallet, a KMS or HSM client) plugs in through MakerSigner.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { addressFromPublicKey } from '../crypto/address.js';
import { personalMessageHash } from '../crypto/eip191.js';
import { bytesToHex, hexToBytes } from '../crypto/hex.js';
import { buildMakerChallenge } from '../crypto/maker-challenge.js';
import type { AuthChallengeMessage } from '../contract/mm.js';
import { clientErrors } from './errors.js';

/** Anything that can personal-sign bytes for one address (an ethers Wallet fits as is). */
export interface MakerSigner {
  /** The maker's address, EIP-55 or lowercase. */
  readonly address: string;
  /** EIP-191 personal-sign of `message` (the raw bytes, not their hex): `0x` + 130 hex, v 0/1 or 27/28. */
  signMessage(message: Uint8Array): Promise<string> | string;
}

/** A signer over a raw secp256k1 private key (`0x` + 64 hex, or 32 bytes). */
export function privateKeySigner(privateKey: string | Uint8Array): MakerSigner {
  const key = typeof privateKey === 'string' ? hexToBytes(privateKey) : privateKey;
  if (key === null || key.length !== 32 || !secp256k1.utils.isValidSecretKey(key)) {
    throw clientErrors.badPrivateKey();
  }
  const address = addressFromPublicKey(secp256k1.getPublicKey(key, false));
  return {
    address,
    signMessage(message) {
      // 'recovered' is recovery id || r || s; Ethereum wants r || s || v with v = 27 + recovery id.
      const recovered = secp256k1.sign(personalMessageHash(message), key, { prehash: false, format: 'recovered' });
      const out = new Uint8Array(65);
      out.set(recovered.subarray(1), 0);
      out[64] = 27 + (recovered[0] ?? 0);
      return '0x' + bytesToHex(out);
    },
  };
}

/** The 75 bytes a maker signs: 35-byte domain tag || 32 nonce bytes (hex-decoded) || timestamp u64 LE. */
export function makerChallengeBytes(challenge: Pick<AuthChallengeMessage, 'nonce' | 'timestamp'>, domainTag: string): Uint8Array {
  const nonce = hexToBytes(challenge.nonce);
  if (nonce === null || nonce.length !== 32) throw clientErrors.badNonce();
  return buildMakerChallenge(domainTag, nonce, challenge.timestamp);
}
