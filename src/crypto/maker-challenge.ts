// The 75 bytes a market maker signs to authenticate its WebSocket (interface "Market-maker WebSocket flow",
// contract section 7): 35-byte ASCII domain tag || 32 nonce bytes || timestamp u64 little-endian.
// Pure; runs on the main thread (the gateway builds the expected bytes) and in tests and the maker SDK.

import assert from 'node:assert/strict';

export const DOMAIN_TAG_BYTES = 35;
export const CHALLENGE_NONCE_BYTES = 32;
export const MAKER_CHALLENGE_BYTES = DOMAIN_TAG_BYTES + CHALLENGE_NONCE_BYTES + 8;
/** PARLAYD_MM_DOMAIN_TAG's default, for development: a deployment sets its own (contract section 7). */
export const DEV_DOMAIN_TAG = 'parlayd:mm:ws-auth:v1:localhost.dev';

// Printable ASCII only, so one char is one byte and the tag means the same to every client's encoder. The
// pattern is also the config schema's (config.ts), so start-up and the challenge builder agree by construction.
export const DOMAIN_TAG_PATTERN = `^[\\x20-\\x7e]{${DOMAIN_TAG_BYTES}}$`;
const DOMAIN_TAG_RE = new RegExp(DOMAIN_TAG_PATTERN);

/** True for exactly 35 printable ASCII chars, e.g. `parlayd:mm:ws-auth:v1:localhost.dev`. */
export function isValidDomainTag(tag: unknown): tag is string {
  return typeof tag === 'string' && DOMAIN_TAG_RE.test(tag);
}

/** Throws unless `tag` is a valid domain tag; the service calls it at start so a bad config stops it. */
export function assertDomainTag(tag: unknown): asserts tag is string {
  assert.ok(isValidDomainTag(tag), `maker domain tag must be exactly ${DOMAIN_TAG_BYTES} printable ASCII bytes`);
}

/** tag (35) || nonce (32) || timestampS as u64 LE (8): the bytes the maker personal-signs. */
export function buildMakerChallenge(domainTag: string, nonce32: Uint8Array, timestampS: number): Uint8Array {
  assertDomainTag(domainTag);
  assert.ok(nonce32 instanceof Uint8Array && nonce32.length === CHALLENGE_NONCE_BYTES, 'nonce must be 32 bytes');
  assert.ok(Number.isSafeInteger(timestampS) && timestampS >= 0, 'timestampS must be a non-negative safe integer');
  const out = new Uint8Array(MAKER_CHALLENGE_BYTES);
  for (let i = 0; i < DOMAIN_TAG_BYTES; i++) out[i] = domainTag.charCodeAt(i);
  out.set(nonce32, DOMAIN_TAG_BYTES);
  new DataView(out.buffer).setBigUint64(DOMAIN_TAG_BYTES + CHALLENGE_NONCE_BYTES, BigInt(timestampS), true);
  return out;
}
