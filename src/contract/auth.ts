import { Type } from '@sinclair/typebox';
import { Address, AddressInput, SafeInt, StrictObject, Uuid } from './common.js';

export const WalletChallengeRequest = StrictObject({ address: AddressInput });
export const WalletChallengeResponse = Type.Object({
  message: Type.String({ description: 'EIP-4361 message to sign with personal-sign' }),
  nonce: Type.String(),
  expires_at_ms: SafeInt(),
});
/**
 * Bound on a signature's text, here and on order.signature (contract/rfq.ts). Contract section 2 makes a
 * signature that is not in its encoding 400 INVALID_SIGNATURE, and the handler says so (and, on login,
 * spends the nonce); the schema only bounds the string. 512 is ~4x the longest right encoding (132 chars),
 * room for every wrong one a client plausibly sends (no 0x, base64, a JSON-encoded signature object); a
 * longer string is no signature in any encoding, so it stays a schema range violation, 400 VALIDATION_FAILED.
 */
export const MAX_SIGNATURE_CHARS = 512;

export const WalletLoginRequest = StrictObject({
  message: Type.String({ minLength: 1, maxLength: 4096 }),
  signature: Type.String({
    maxLength: MAX_SIGNATURE_CHARS,
    description: '0x + 130 hex (65 bytes r, s, v; v 0/1 or 27/28); any other text is 400 INVALID_SIGNATURE and spends the nonce',
  }),
});
export const SessionLoginRequest = StrictObject({ id_token: Type.String({ minLength: 1, maxLength: 8192 }) });
export const SessionResponse = Type.Object(
  { session_token: Type.String(), expires_at_ms: SafeInt(), user_id: Uuid, wallet: Address },
  { $id: 'Session' },
);
export const LogoutResponse = Type.Object({ revoked: Type.Boolean() });
