// EIP-191 version 0x45 ("personal_sign") message hash. Pure; runs on any thread (verify workers on the hot
// path, main thread in tests and for wallet login).

import { keccak_256 } from '@noble/hashes/sha3.js';
import { utf8ToBytes } from '@noble/hashes/utils.js';

const PERSONAL_PREFIX = '\x19Ethereum Signed Message:\n';

/**
 * keccak256("\x19Ethereum Signed Message:\n" + decimal byte length + message). The length is of the bytes,
 * not of any string they came from: order bytes and the 75-byte maker challenge are binary.
 */
export function personalMessageHash(message: Uint8Array): Uint8Array {
  if (!(message instanceof Uint8Array)) throw new TypeError('personalMessageHash: message must be a Uint8Array');
  // Streaming the two parts avoids allocating a concatenated copy of the message per signature.
  return keccak_256
    .create()
    .update(utf8ToBytes(PERSONAL_PREFIX + String(message.length)))
    .update(message)
    .digest();
}
