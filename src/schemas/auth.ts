import { Type } from '@sinclair/typebox';
import { Address, AddressInput, SafeInt, StrictObject, Uuid } from './common.js';

export const WalletChallengeRequest = StrictObject({ address: AddressInput });
export const WalletChallengeResponse = Type.Object({
  message: Type.String({ description: 'EIP-4361 message to sign with personal-sign' }),
  nonce: Type.String(),
  expires_at_ms: SafeInt(),
});
export const WalletLoginRequest = StrictObject({
  message: Type.String({ minLength: 1, maxLength: 4096 }),
  signature: Type.String({ pattern: '^0x[0-9a-fA-F]{130}$', description: '0x + 130 hex, v 0/1 or 27/28' }),
});
export const SessionLoginRequest = StrictObject({ id_token: Type.String({ minLength: 1, maxLength: 8192 }) });
export const SessionResponse = Type.Object(
  { session_token: Type.String(), expires_at_ms: SafeInt(), user_id: Uuid, wallet: Address },
  { $id: 'Session' },
);
export const LogoutResponse = Type.Object({ revoked: Type.Boolean() });
