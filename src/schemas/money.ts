// Contract section 11: accounts' balances, credits of makers and the protocol, withdrawals and the ledger check.
import { Type, type Static } from '@sinclair/typebox';
import { nextCursorProperty, pageQueryProperties } from '../http/paging.js';
import { Address, AddressInput, MicrosString, SafeInt, StrictObject } from './common.js';

export const MakerBalance = Type.Object(
  { available_micros: MicrosString, locked_micros: MicrosString, pending_withdrawal_micros: MicrosString },
  { $id: 'MakerBalance' },
);
export const ProtocolBalance = Type.Object({ available_micros: MicrosString, committed_micros: MicrosString }, { $id: 'ProtocolBalance' });

const IdempotencyKey = Type.String({ minLength: 1, maxLength: 128 });
export const AccountCreditRequest = StrictObject({
  amount_micros: SafeInt({ minimum: 1, description: 'USDC micros to credit' }),
  idempotency_key: IdempotencyKey,
});
export type AccountCreditRequest = Static<typeof AccountCreditRequest>;
export const MakerCreditResponse = Type.Object({ address: Address, credited_micros: MicrosString, balance: MakerBalance });
export const ProtocolCreditResponse = Type.Object({ credited_micros: MicrosString, balance: ProtocolBalance });

export const WithdrawalStatus = Type.Union([Type.Literal('pending'), Type.Literal('completed'), Type.Literal('failed')]);
export const WithdrawalRequest = StrictObject({
  amount_micros: SafeInt({ minimum: 1, description: 'USDC micros to withdraw' }),
  destination: AddressInput,
  idempotency_key: IdempotencyKey,
});
export type WithdrawalRequest = Static<typeof WithdrawalRequest>;
export const Withdrawal = Type.Object(
  {
    withdrawal_id: Type.String(),
    status: WithdrawalStatus,
    amount_micros: MicrosString,
    destination: Address,
    created_at_ms: Type.Integer(),
    finished_at_ms: Type.Union([Type.Integer(), Type.Null()]),
  },
  { $id: 'Withdrawal' },
);
export type Withdrawal = Static<typeof Withdrawal>;
/** The operator's view names the account too: `user:<id>` or `maker:<address>`. */
export const AdminWithdrawal = Type.Composite([Withdrawal, Type.Object({ account: Type.String() })], { $id: 'AdminWithdrawal' });

/** Lists of withdrawals: an index read of the page only. */
export const WITHDRAWAL_PAGE = { maxLimit: 100, defaultLimit: 50 } as const;
export const WithdrawalsQuery = StrictObject({ ...pageQueryProperties(WITHDRAWAL_PAGE) });
export const AdminWithdrawalsQuery = StrictObject({ status: Type.Optional(WithdrawalStatus), ...pageQueryProperties(WITHDRAWAL_PAGE) });
export const WithdrawalList = Type.Object({ withdrawals: Type.Array(Withdrawal), ...nextCursorProperty });
export const AdminWithdrawalList = Type.Object({ withdrawals: Type.Array(AdminWithdrawal), ...nextCursorProperty });
export const WithdrawalIdParams = StrictObject({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const LedgerCheckResponse = Type.Object({
  ok: Type.Boolean(),
  accounts: Type.Integer(),
  transfers: Type.Integer(),
  total_micros: MicrosString,
  credited_micros: MicrosString,
  withdrawn_micros: MicrosString,
  // Open interest: every user's at-risk stakes and every maker's locked liabilities.
  at_risk_micros: MicrosString,
  locked_micros: MicrosString,
  differences: Type.Array(
    Type.Object({ account: Type.String(), bucket: Type.String(), expected_micros: MicrosString, actual_micros: MicrosString }),
  ),
});
