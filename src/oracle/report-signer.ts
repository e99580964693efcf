// Pure; any thread. The oracle's side of a report (contract section 12): what the feeder (scripts/
// oracle-feed.ts) and the benchmark sign with, so they need no second implementation of the format.
// @noble/curves, a runtime dependency: the feeder runs from a plain `npm ci --omit=dev` install too.
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { addressFromPublicKey } from '../crypto/address.js';
import { personalMessageHash } from '../crypto/eip191.js';
import { hexToBytes } from '../crypto/hex.js';
import { oracleReportBytes, type PriceReportFields } from './signing.js';

export interface OracleKey {
  privateKey: Uint8Array;
  /** Lowercase 0x address: the value for PARLAYD_ORACLE_ADDRESSES. */
  address: string;
}

/** A key from 0x + 64 hex digits; throws RangeError on anything else (the message never repeats the input). */
export function oracleKeyFromHex(hex: string): OracleKey {
  if (!/^(0x)?[0-9a-fA-F]{64}$/.test(hex)) throw new RangeError('an oracle key is 0x followed by 64 hex digits');
  const privateKey = hexToBytes(hex);
  if (privateKey === null || !secp256k1.utils.isValidSecretKey(privateKey)) throw new RangeError('not a valid secp256k1 private key');
  return { privateKey, address: addressFromPublicKey(secp256k1.getPublicKey(privateKey, false)) };
}

export function randomOracleKey(): OracleKey {
  const privateKey = secp256k1.utils.randomSecretKey();
  return { privateKey, address: addressFromPublicKey(secp256k1.getPublicKey(privateKey, false)) };
}

/** EIP-191 personal-sign of the 41 report bytes, as the route takes it: base64 of r || s || v (v = 27/28). */
export function signOracleReport(key: OracleKey, report: PriceReportFields): string {
  const hash = personalMessageHash(oracleReportBytes(report));
  // noble v2 'recovered': recovery id || r || s; prehash false: the EIP-191 hash above is what is signed.
  const recovered = secp256k1.sign(hash, key.privateKey, { prehash: false, format: 'recovered' });
  const sig65 = new Uint8Array(65);
  sig65.set(recovered.subarray(1), 0);
  sig65[64] = 27 + (recovered[0] ?? 0);
  return Buffer.from(sig65).toString('base64');
}
