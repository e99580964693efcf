// Any thread; reads only. Withdrawals' records and their indexes as LMDB holds them (ledger/withdrawals.ts
// writes them), as functions of the environment: they run where the records are, this process's LMDB or, in a
// cluster, the shard node of the account's owner, which wrote them with the money (http/owned-views.ts).
//
//   withdrawals          id → WithdrawalRecord
//   withdrawalKeys       `${account}|${idempotency_key}` → id: the request's idempotency key
//   accountWithdrawals   `${account}|${created_at_ms}|${id}` → true: an account's own, newest first
//   withdrawalsByStatus  `${status}|${created_at_ms}|${id}` → true: the operator's queue, oldest first
import type { AccountId } from '../records/ledger.js';
import type { WithdrawalKeyRecord, WithdrawalRecord, WithdrawalStatus } from '../records/withdrawals.js';
import type { Store } from '../store/db.js';
import { clampKey } from '../store/key-range.js';
import { table } from '../store/records.js';

/** A page of withdrawals and the key it stopped at (the next page's cursor), or null at the end. */
export interface WithdrawalPage {
  items: WithdrawalRecord[];
  next: string | null;
}

/**
 * What withdrawals read of their records, wherever the records are: here (localWithdrawalReads), or at the
 * node of the account's owner (http/owned-views.ts OwnedViews.withdrawalReads). Each read sees every write
 * the owner had answered before it was asked.
 */
export interface WithdrawalReads {
  /** Null for an unknown id, and for one that names no owner. */
  withdrawal(withdrawalId: string): Promise<WithdrawalRecord | null>;
  key(account: AccountId, idempotencyKey: string): Promise<WithdrawalKeyRecord | null>;
  ofAccount(account: AccountId, limit: number, before: string | null): Promise<WithdrawalPage>;
  ofStatus(status: WithdrawalStatus, limit: number, after: string | null): Promise<WithdrawalPage>;
}

/** The reads of one LMDB environment that every owner writes (one process). */
export function localWithdrawalReads(store: Store): WithdrawalReads {
  const fresh = () => store.root.resetReadTxn(); // what the owners committed since this thread's last read
  return {
    withdrawal: async (withdrawalId) => (fresh(), readWithdrawal(store, withdrawalId)),
    key: async (account, idempotencyKey) => (fresh(), readWithdrawalKey(store, account, idempotencyKey)),
    ofAccount: async (account, limit, before) => accountWithdrawalsPage(store, account, limit, before),
    ofStatus: async (status, limit, after) => withdrawalsOfStatusPage(store, status, limit, after),
  };
}

const pad = (ms: number) => String(ms).padStart(16, '0');

/** A withdrawal id: its time, its account's owner (two hex digits: where a cluster reads it), and chance. */
export function newWithdrawalId(createdAtMs: number, owner: number, random: Buffer): string {
  return `w_${pad(createdAtMs)}${owner.toString(16).padStart(2, '0')}${random.toString('hex')}`;
}

const WITHDRAWAL_ID = /^w_\d{16}([0-9a-f]{2})[0-9a-f]{10}$/;

/** The owner a withdrawal id names, or null for an id this service did not make. */
export function ownerOfWithdrawalId(withdrawalId: string): number | null {
  const match = WITHDRAWAL_ID.exec(withdrawalId);
  return match === null ? null : Number.parseInt(match[1]!, 16);
}

export const withdrawalKeyOf = (account: AccountId, idempotencyKey: string) => `${account}|${idempotencyKey}`;
export const accountWithdrawalKey = (r: WithdrawalRecord) => `${r.account}|${pad(r.createdAtMs)}|${r.withdrawalId}`;
export const statusWithdrawalKey = (status: WithdrawalStatus, r: WithdrawalRecord) => `${status}|${pad(r.createdAtMs)}|${r.withdrawalId}`;

export function readWithdrawal(store: Store, withdrawalId: string): WithdrawalRecord | null {
  return table(store, 'withdrawals').get(withdrawalId) ?? null;
}

/** What the request under an idempotency key asked, or null when the key is new. */
export function readWithdrawalKey(store: Store, account: AccountId, idempotencyKey: string): WithdrawalKeyRecord | null {
  return table(store, 'withdrawalKeys').get(withdrawalKeyOf(account, idempotencyKey)) ?? null;
}

/** An account's own withdrawals, newest first, after the key `before` (exclusive). */
export function accountWithdrawalsPage(store: Store, account: AccountId, limit: number, before: string | null): WithdrawalPage {
  const low = `${account}|`;
  const high = `${account}|~`;
  // Both ends inside the account's keys, whatever `before` says (store/key-range.ts).
  const start = before === null ? high : clampKey(before, low, high);
  // The range starts at the cursor's own key (inclusive): one row more, then without it.
  const keys = [...table(store, 'accountWithdrawals').getKeys({ start, end: low, reverse: true, limit: limit + 2 })].filter(
    (k) => k !== before,
  );
  return pageOf(store, keys, limit);
}

/** The operator's queue of one status, oldest first, after the key `after` (exclusive). */
export function withdrawalsOfStatusPage(store: Store, status: WithdrawalStatus, limit: number, after: string | null): WithdrawalPage {
  const low = `${status}|`;
  const high = `${status}|~`;
  const start = after === null ? low : clampKey(after, low, high);
  const keys = [...table(store, 'withdrawalsByStatus').getKeys({ start, end: high, limit: limit + 2 })].filter((k) => k !== after);
  return pageOf(store, keys, limit);
}

function pageOf(store: Store, keys: string[], limit: number): WithdrawalPage {
  const pageKeys = keys.slice(0, limit);
  const items = pageKeys.map((key) => readWithdrawal(store, key.slice(key.lastIndexOf('|') + 1))!);
  return { items, next: keys.length > limit ? pageKeys.at(-1)! : null };
}
