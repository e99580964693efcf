// docs/maker-protocol.md is what maker developers build from: its worked example must be the signing vector
// byte for byte, and its tables must name every close reason and error code the server can send.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { personalMessageHash } from '../../src/crypto/eip191.js';
import { bytesToHex, hexToBytes } from '../../src/crypto/hex.js';
import { buildMakerChallenge } from '../../src/crypto/maker-challenge.js';
import { AUTH_FAILURE_REASONS } from '../../src/contract/mm.js';
import { CLOSE, MAKER_ERRORS } from '../../src/contract/maker-protocol.js';
import { repoRoot } from '../helpers/paths.js';
import { signingVectors } from '../helpers/vectors.js';

const doc = readFileSync(path.join(repoRoot, 'docs', 'maker-protocol.md'), 'utf8');
const vector = signingVectors.maker_challenge;

describe('maker protocol document', () => {
  it('the worked example is the signing vector: tag, nonce, timestamp, the 75 bytes, the hash and the signature', () => {
    const bytes = buildMakerChallenge(vector.domain_tag, hexToBytes(vector.nonce_hex)!, vector.timestamp);
    assert.equal(bytesToHex(bytes), vector.bytes_hex);
    assert.ok(doc.includes(vector.bytes_hex), 'the 75 bytes');
    assert.ok(doc.includes(bytesToHex(Buffer.from(vector.domain_tag, 'ascii'))), 'the domain tag hex');
    assert.ok(doc.includes(bytesToHex(bytes.subarray(67))), 'the timestamp bytes');
    assert.ok(doc.includes(bytesToHex(personalMessageHash(bytes))), 'the signed hash');
    const sig = vector.signature_hex;
    for (const part of [sig.slice(0, 64), sig.slice(64, 128)]) assert.ok(doc.includes(part), 'r and s');
    assert.ok(doc.includes(`v  ${sig.slice(128)}`), 'v');
  });

  it('names every auth_result reason, error code and close reason', () => {
    for (const reason of AUTH_FAILURE_REASONS) assert.ok(doc.includes(`| ${reason} |`), reason);
    for (const code of Object.keys(MAKER_ERRORS)) assert.ok(doc.includes(`| ${code} |`), code);
    for (const { code, reason } of Object.values(CLOSE)) {
      assert.ok(new RegExp(`\\| ${code} \\| [^\\n]*${reason}`).test(doc), `${code} ${reason}`);
    }
  });
});
