// Contract section 11: accounts' balances, credits of makers and the protocol, withdrawals and the ledger check.
import { Type, type Static } from '@sinclair/typebox';
import { nextCursorProperty, pageQueryProperties } from './paging.js';
import { Address, AddressInput, MicrosString, PositiveMicrosInput, StrictObject } from './common.js';

export const MakerBalance = Type.Object(
  { available_micros: MicrosString, locked_micros: MicrosString, pending_withdrawal_micros: MicrosString },
  { $id: 'MakerBalance' },
);
export const ProtocolBalance = Type.Object({ available_micros: MicrosString, committed_micros: MicrosString }, { $id: 'ProtocolBalance' });

const IdempotencyKey = Type.String({ minLength: 1, maxLength: 128 });
export const AccountCreditRequest = StrictObject({
  amount_micros: PositiveMicrosInput('USDC micros to credit'),
  idempotency_key: IdempotencyKey,
});
export type AccountCreditRequest = Static<typeof AccountCreditRequest>;
export const MakerCreditResponse = Type.Object({ address: Address, credited_micros: MicrosString, balance: MakerBalance });
export const ProtocolCreditResponse = Type.Object({ credited_micros: MicrosString, balance: ProtocolBalance });

export const WithdrawalStatus = Type.Union([Type.Literal('pending'), Type.Literal('completed'), Type.Literal('failed')]);
export const WithdrawalRequest = StrictObject({
  amount_micros: PositiveMicrosInput('USDC micros to withdraw'),
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

/**
 * Why a difference was found (docs/money.md, "Invariants"): the contract's fields say where and how much; these
 * two, added by us, say which rule and, for a hold or a record, which reference.
 */
export const LedgerDifferenceReason = Type.Union(
  [
    Type.Literal('transfers'), // the bucket is not what its transfers add up to (expected)
    Type.Literal('negative'), // the bucket is below 0
    Type.Literal('holds'), // the bucket is not what its holds add up to (expected)
    Type.Literal('hold_without_record'), // a hold (actual) for nothing that holds money
    Type.Literal('record_without_hold'), // a record that holds money (expected) has no hold
    Type.Literal('hold_differs'), // a hold (actual) is not what its record says (expected)
    Type.Literal('pot'), // an open contest's pool hold (actual) is not its pot as its entries make it (expected)
    Type.Literal('overdue'), // an RFQ still active well past its expiry, its wager (actual) still reserved
  ],
  { description: 'the rule the difference breaks (docs/money.md, "Invariants")' },
);
export type LedgerDifferenceReason = Static<typeof LedgerDifferenceReason>;
export const LedgerDifference = Type.Object({
  account: Type.String(),
  bucket: Type.String(),
  expected_micros: MicrosString,
  actual_micros: MicrosString,
  reason: LedgerDifferenceReason,
  ref: Type.Optional(Type.String({ description: 'the reference of the hold or record concerned (`rfq:<id>`, `contest:<id>:pool` ...)' })),
});
export type LedgerDifference = Static<typeof LedgerDifference>;
export const LedgerCheckResponse = Type.Object({
  ok: Type.Boolean(),
  accounts: Type.Integer(),
  transfers: Type.Integer(),
  total_micros: MicrosString,
  credited_micros: MicrosString,
  withdrawn_micros: MicrosString,
  // Money between two owners that LMDB shows left one and not yet reached the other (negative: reached it
  // first); always 0 with one shard. Conservation: total + in transit = credited - withdrawn.
  in_transit_micros: MicrosString,
  // Open interest: every user's at-risk stakes and every maker's locked liabilities.
  at_risk_micros: MicrosString,
  locked_micros: MicrosString,
  differences: Type.Array(LedgerDifference),
});
