// Any thread. The accounts of the ledger, their buckets, and the durable shapes of accounts, transfers, holds
// and journal rows (contract section 11). Key formats live here and nowhere else.
//
// Modelled on TigerBeetle's ledger: every movement is a transfer between two (account, bucket) sides with a
// unique id; an account's buckets are only ever changed by transfers; money held for something (an RFQ's
// reservation, a filled stake, a maker's locked liability, a contest's pool, a pending withdrawal) is a hold
// keyed by its reference, the analogue of a pending transfer, later posted (moved on) or voided (returned).
// The world outside is not an account: a credit is a transfer from it, a completed withdrawal one to it.

import { Type, type Static } from '@sinclair/typebox';
import { MicrosString } from '../contract/common.js';
import { Bucket, TransferKind } from '../contract/ledger-kinds.js';

export const USER_BUCKETS = ['available', 'reserved', 'at_risk', 'pending_withdrawal'] as const satisfies readonly Bucket[];
export const MAKER_BUCKETS = ['available', 'locked', 'pending_withdrawal'] as const satisfies readonly Bucket[];
export const PROTOCOL_BUCKETS = ['available', 'committed'] as const satisfies readonly Bucket[];

/** `user:<user_id>`, `maker:<address>` or `protocol`. */
export type AccountId = string;
export const PROTOCOL: AccountId = 'protocol';
const USER_PREFIX = 'user:';
export const userAccount = (userId: string): AccountId => `${USER_PREFIX}${userId}`;
/** The user id of a user's account; null for a maker's or the protocol's. */
export const userIdOf = (account: AccountId): string | null => (account.startsWith(USER_PREFIX) ? account.slice(USER_PREFIX.length) : null);
export const makerAccount = (address: string): AccountId => `maker:${address}`;

export function bucketsOf(account: AccountId): readonly Bucket[] {
  if (account === PROTOCOL) return PROTOCOL_BUCKETS;
  if (userIdOf(account) !== null) return USER_BUCKETS;
  if (account.startsWith('maker:')) return MAKER_BUCKETS;
  throw new Error(`not an account: ${account}`);
}

/** How a settled position ended: its stake and liability went to the taker ('won'), the maker ('lost') or back ('voided'). */
export type PositionOutcome = 'won' | 'lost' | 'voided';

/** On disk: decimal strings, only the buckets that were ever touched. */
export type AccountRecord = Partial<Record<Bucket, string>>;

export interface Side {
  account: AccountId;
  bucket: Bucket;
}

/**
 * A maker's lock returned to its available because the fill on another owner that asked for it will never be
 * (src/engine, two phases). Never a user's movement, so never in a user's journal (the API's kinds).
 */
export type UnlockKind = 'unlock';

export interface TransferRecord {
  id: string;
  kind: TransferKind | UnlockKind;
  /** null: the world outside (a credit). */
  debit: Side | null;
  /** null: the world outside (a completed withdrawal). */
  credit: Side | null;
  amountMicros: string;
  ref: string;
  atMs: number;
  /** Applied in halves by two owners (src/engine): `transferHalves` says which sides LMDB holds. */
  inHalves?: true;
}

/** Money held for one reference, until it is moved on (posted) or returned (voided). */
export interface HoldRecord {
  account: AccountId;
  bucket: Exclude<Bucket, 'available'>;
  amountMicros: string;
}

/** One transfer as one account saw it: what it did to each of the account's buckets (a schema: the journal view checks the rows it reads). */
export const JournalRow = Type.Object({
  transferId: Type.String(),
  kind: TransferKind,
  ref: Type.String(),
  atMs: Type.Integer(),
  deltas: Type.Array(Type.Tuple([Bucket, MicrosString])),
});
export type JournalRow = Static<typeof JournalRow>;

/** `transfers` key: the reference and the step, so a step can never be written twice for one reference. */
export const transferId = (ref: string, step: string) => `${ref}/${step}`;

/**
 * `transferHalves` key: one side of a transfer between two owners, written with that side's account by the
 * owner that applied it (engine/read-model.ts). Looked up whole, never parsed.
 */
export const transferHalfKey = (id: string, half: 'debit' | 'credit') => `${id}|${half}`;

/** `accountJournal` key: an account's rows in time order ('|' is in no account id nor reference). */
export const journalKey = (account: AccountId, atMs: number, id: string) => `${account}|${String(atMs).padStart(16, '0')}|${id}`;
export const journalRange = (account: AccountId) => ({ start: `${account}|`, end: `${account}|~` });

// References (contract section 11).
export const withdrawalRef = (withdrawalId: string) => `withdrawal:${withdrawalId}`;
export const creditRef = (idempotencyKey: string) => `credit:${idempotencyKey}`;
/** The maker's side of a position: its locked liability is held under this reference. */
export const lockRef = (rfqRef: string) => `${rfqRef}:lock`;
export const poolRef = (contestId: string) => `contest:${contestId}:pool`;

/** A user's balance as versions 1-4 kept it. */
export interface OneSidedBalance {
  availableMicros: string;
  reservedMicros: string;
  atRiskMicros: string;
}
