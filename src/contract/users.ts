import { Type } from '@sinclair/typebox';
import { Address, AddressInput, MicrosString, PositiveMicrosInput, StrictObject, Uuid } from './common.js';

export const BalanceResponse = Type.Object(
  { available_micros: MicrosString, reserved_micros: MicrosString, at_risk_micros: MicrosString, pending_withdrawal_micros: MicrosString },
  { $id: 'Balance' },
);

export const CreditRequest = StrictObject({
  wallet: AddressInput,
  amount_micros: PositiveMicrosInput('USDC micros to credit'),
  idempotency_key: Type.String({ minLength: 1, maxLength: 128 }),
});
export const CreditResponse = Type.Object({
  user_id: Uuid,
  wallet: Address,
  credited_micros: MicrosString,
  balance: BalanceResponse,
});
