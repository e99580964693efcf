// Main thread (the recovery itself runs on the verify pool). The maker challenge-response (interface.md
// "Market-maker WebSocket flow", contract section 7): a fresh challenge per connection, and the checks of its
// auth_response. Pure decisions here; authenticator.ts acts on them (the socket, the timers, the session).
import { randomBytes } from 'node:crypto';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { parseAddress } from '../crypto/address.js';
import { bytesToHex } from '../crypto/hex.js';
import { buildMakerChallenge, CHALLENGE_NONCE_BYTES } from '../crypto/maker-challenge.js';
import { parseSignatureHex } from '../crypto/signature.js';
import type { VerifyPool } from '../crypto/verify-pool.js';
import { AuthResponseMessage, type AuthChallengeMessage, type AuthFailureReason } from '../contract/mm.js';

export interface Challenge {
  nonceHex: string;
  timestampS: number;
  /** Expiry is enforced in server ms, not in the second-granular timestamp the maker signs. */
  expiresAtMs: number;
  /** The 75 bytes the maker must have personal-signed. */
  message: Uint8Array;
}

export type CheckedAuthResponse =
  { ok: true; address: string; signature65: Uint8Array } | { ok: false; reason: AuthFailureReason; detail: string };

/**
 * Why an auth_response was refused, in more words than its reason: logged (debug), never sent, since the maker
 * learns only the reason (a prober learns nothing more from the text).
 */
export const AUTH_REFUSAL_DETAILS = {
  challengeExpired: 'challenge expired',
  badAuthResponse: 'bad auth_response',
  badChecksum: 'address fails its EIP-55 checksum',
  badSignatureHex: 'signature is not 130 hex chars',
  notSigner: 'the signature does not recover to the address',
  notRegistered: 'not a registered maker',
  removedMeanwhile: 'maker removed during authentication',
} as const;

const authResponseCheck = TypeCompiler.Compile(AuthResponseMessage);

export function createChallenge(domainTag: string, nowMs: number, ttlMs: number): Challenge {
  const nonce = new Uint8Array(randomBytes(CHALLENGE_NONCE_BYTES));
  const timestampS = Math.floor(nowMs / 1000);
  return {
    nonceHex: bytesToHex(nonce),
    timestampS,
    expiresAtMs: nowMs + ttlMs,
    message: buildMakerChallenge(domainTag, nonce, timestampS),
  };
}

export function challengeMessage(challenge: Challenge): AuthChallengeMessage {
  return { type: 'auth_challenge', nonce: challenge.nonceHex, timestamp: challenge.timestampS };
}

/**
 * Everything about an auth_response that needs no signature recovery. Expiry first: a response that comes
 * too late is CHALLENGE_EXPIRED whatever it contains. Then shape: schema, EIP-55 (a mixed-case address with a
 * bad checksum is refused, not lowercased), 130 hex of signature.
 */
export function checkAuthResponse(challenge: Challenge, message: unknown, nowMs: number): CheckedAuthResponse {
  if (nowMs >= challenge.expiresAtMs) return { ok: false, reason: 'CHALLENGE_EXPIRED', detail: AUTH_REFUSAL_DETAILS.challengeExpired };
  if (!authResponseCheck.Check(message)) {
    const first = authResponseCheck.Errors(message).First();
    return {
      ok: false,
      reason: 'MALFORMED',
      detail: first === undefined ? AUTH_REFUSAL_DETAILS.badAuthResponse : `${first.path} ${first.message}`,
    };
  }
  const address = parseAddress(message.address);
  if (address === null) return { ok: false, reason: 'MALFORMED', detail: AUTH_REFUSAL_DETAILS.badChecksum };
  const signature65 = parseSignatureHex(message.signature);
  if (signature65 === null) return { ok: false, reason: 'MALFORMED', detail: AUTH_REFUSAL_DETAILS.badSignatureHex };
  return { ok: true, address, signature65 };
}

/**
 * Recovers the signer on the verify pool and compares it with the claimed address. A v outside 0/1/27/28,
 * a high-s or unrecoverable signature and a different signer are all INVALID_SIGNATURE: to the maker they
 * mean the same thing, "this key did not sign this challenge". Rejects only when the pool does
 * (VerifyPoolOverloadedError, or a bug).
 */
export async function verifySigner(
  pool: Pick<VerifyPool, 'recoverPersonalSigner'>,
  challenge: Challenge,
  checked: { address: string; signature65: Uint8Array },
): Promise<boolean> {
  // A login: the pool's bounded login share (verify-pool.ts), so maker logins cannot starve signed orders.
  const recovered = await pool.recoverPersonalSigner(challenge.message, checked.signature65, 'login');
  return recovered.ok && recovered.address === checked.address;
}
