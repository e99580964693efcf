// Any thread; reads only. The ledger check of contract section 11 (GET /v1/admin/ledger/check): every bucket
// of every account recomputed from the transfers alone and compared with the account records; none may be
// negative; and money is conserved: the sum of every bucket of every account equals what came in (credits,
// and balances carried over by a migration) less what went out (completed withdrawals). Then the holds and
// the records they stand for (holds-audit.ts): what the transfers cannot show, because the ledger always
// writes a transfer and its bucket together. Every finding is one of `differences`, with its reason.
//
// With several shards a transfer between two owners reaches LMDB in halves, each in its owner's own commit
// (engine/read-model.ts), so a snapshot can hold one side and not yet the other. Each half is marked
// (`transferHalves`), and the check counts exactly the sides LMDB holds: the accounts then agree with their
// transfers at every moment, and the money between the halves is `in_transit_micros`, with which the total
// is conserved. Without the markers a check during traffic would report a difference for every such
// transfer in flight.
//
// It runs in one synchronous pass, so it reads one LMDB snapshot (this thread's read transaction is not
// renewed during a synchronous run), and LMDB readers never block writers: the shards commit on while it runs.
import { bucketsOf, transferHalfKey, type AccountId } from '../records/ledger.js';
import type { Bucket } from '../contract/ledger-kinds.js';
import type { Static } from '@sinclair/typebox';
import type { LedgerCheckResponse, LedgerDifference } from '../contract/money.js';
import type { Store } from '../store/db.js';
import { table } from '../store/records.js';
import { auditHolds } from './holds-audit.js';

/** The answer's type is its schema's (GET /v1/admin/ledger/check, contract/money.ts). */
export type LedgerCheck = Static<typeof LedgerCheckResponse>;
export type { LedgerDifference } from '../contract/money.js';

/**
 * `nowMs`: the live service's time, for the rule that needs one (an RFQ active long past its expiry); null
 * on a stopped service's data, where an RFQ active at the stop is what the next start ends.
 */
export function checkLedger(store: Store, nowMs: number | null = null): LedgerCheck {
  const check = checkTransfers(store);
  const holds = auditHolds(store, nowMs);
  if (holds.length === 0) return check;
  check.ok = false;
  check.differences.push(...holds);
  return check;
}

/**
 * The transfers' half alone: every bucket against its transfers, none negative, money conserved. For the
 * ledger's own tests, which move money without the records a service writes with it.
 */
export function checkTransfers(store: Store): LedgerCheck {
  const expected = new Map<AccountId, Map<Bucket, bigint>>();
  const add = (account: AccountId, bucket: Bucket, delta: bigint) => {
    let buckets = expected.get(account);
    if (buckets === undefined) expected.set(account, (buckets = new Map()));
    buckets.set(bucket, (buckets.get(bucket) ?? 0n) + delta);
  };
  const halves = table(store, 'transferHalves');
  let credited = 0n;
  let withdrawn = 0n;
  let inTransit = 0n;
  let transfers = 0;
  for (const { value: t } of table(store, 'transfers').getRange()) {
    transfers++;
    const amount = BigInt(t.amountMicros);
    // A transfer between two owners counts for the sides LMDB holds; one whole on one owner, for both.
    const hasDebit = t.inHalves !== true || halves.get(transferHalfKey(t.id, 'debit')) !== undefined;
    const hasCredit = t.inHalves !== true || halves.get(transferHalfKey(t.id, 'credit')) !== undefined;
    if (hasDebit) {
      if (t.debit === null) credited += amount;
      else add(t.debit.account, t.debit.bucket, -amount);
    }
    if (hasCredit) {
      if (t.credit === null) withdrawn += amount;
      else add(t.credit.account, t.credit.bucket, amount);
    }
    if (hasDebit !== hasCredit) inTransit += hasDebit ? amount : -amount;
  }

  const differences: LedgerDifference[] = [];
  const differ = (account: AccountId, bucket: Bucket, want: bigint, have: bigint, reason: 'transfers' | 'negative') =>
    differences.push({ account, bucket, expected_micros: want.toString(), actual_micros: have.toString(), reason });
  let total = 0n;
  let atRisk = 0n;
  let locked = 0n;
  let accounts = 0;
  const seen = new Set<AccountId>();
  for (const { key: account, value: record } of table(store, 'accounts').getRange()) {
    accounts++;
    seen.add(account);
    const want = expected.get(account);
    for (const bucket of bucketsOf(account)) {
      const have = BigInt(record[bucket] ?? '0');
      const computed = want?.get(bucket) ?? 0n;
      total += have;
      if (bucket === 'at_risk') atRisk += have;
      else if (bucket === 'locked') locked += have;
      // A negative bucket is reported against 0, the least it may hold.
      if (have !== computed) differ(account, bucket, computed, have, 'transfers');
      else if (have < 0n) differ(account, bucket, 0n, have, 'negative');
    }
  }
  // Transfers that name an account with no record: money moved to or from nowhere.
  for (const [account, buckets] of expected) {
    if (seen.has(account)) continue;
    for (const [bucket, computed] of buckets) if (computed !== 0n) differ(account, bucket, computed, 0n, 'transfers');
  }
  const isConserved = total + inTransit === credited - withdrawn;
  return {
    ok: differences.length === 0 && isConserved,
    accounts,
    transfers,
    total_micros: total.toString(),
    credited_micros: credited.toString(),
    withdrawn_micros: withdrawn.toString(),
    in_transit_micros: inTransit.toString(),
    at_risk_micros: atRisk.toString(),
    locked_micros: locked.toString(),
    differences,
  };
}
