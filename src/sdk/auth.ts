// Maker SDK, in the maker's process. The maker's side of the challenge-response (docs/maker-protocol.md
// section 2): the answer to a challenge, and which refusals are worth retrying.
import type { AuthChallengeMessage, AuthFailureReason, AuthResponseMessage } from '../contract/mm.js';
import { makerChallengeBytes, type MakerSigner } from './signer.js';

/** Refusals that will not heal by retrying: they stop the client unless retryOnAuthFailure. */
const PERMANENT_AUTH_FAILURES: ReadonlySet<AuthFailureReason> = new Set(['INVALID_SIGNATURE', 'UNKNOWN_MAKER', 'MALFORMED']);

/** Signs the challenge's 75 bytes; rejects when the signer does. */
export async function authResponse(signer: MakerSigner, domainTag: string, challenge: AuthChallengeMessage): Promise<AuthResponseMessage> {
  const signature = await signer.signMessage(makerChallengeBytes(challenge, domainTag));
  return { type: 'auth_response', address: signer.address, signature };
}

/** Whether an auth_result refusal stops the client for good. */
export function stopsClient(reason: AuthFailureReason, options: { retryOnAuthFailure?: boolean }): boolean {
  return PERMANENT_AUTH_FAILURES.has(reason) && options.retryOnAuthFailure !== true;
}
