// Any thread; reads only. The half of the ledger check (check.ts) that looks past the transfers, to the holds
// and the records they stand for (contract section 11, docs/money.md "Invariants" 4-7):
//   - every bucket other than `available` equals the sum of its holds, hold by hold;
//   - each hold is for something that still holds money, with the amount its record says, and each such
//     thing has its hold: an active RFQ (reserved wager), an unsettled fill (the taker's at-risk stake and
//     the maker's locked liability), an open contest (its pool; its entries' stakes until collected), a
//     pending withdrawal;
//   - an open contest's pool holds its pot exactly, as its entries make it, at every commit of its settlement;
//   - given the time, no RFQ is still active (its wager reserved) long past its expiry.
//
// The transfers alone cannot show any of these: the ledger writes a transfer and its bucket together, so they
// only disagree when storage is corrupt. These rules see what a bug in the code that decides a movement leaves:
// money held for an RFQ that ended, a contest refunded and still open, an RFQ that never ends.
//
// It runs in the check's one synchronous pass (one LMDB snapshot) and, when the service is live, sees the
// commits of writers in flight: every rule holds at every commit, because each movement commits with the
// record it goes with. The one flow of several commits, a contest's settlement (contests/settlement.ts), is
// checked commit by commit: an entry's hold, or its settled record, says where its stake is.
import { contestEntryRange, entryRef, type ContestRecord } from '../records/contests.js';
import { isTerminal, rfqRef, type RfqRecord } from '../records/rfqs.js';
import type { LedgerDifference, LedgerDifferenceReason } from '../contract/money.js';
import type { Store } from '../store/db.js';
import { table } from '../store/records.js';
import { lockRef, makerAccount, poolRef, PROTOCOL, userAccount, withdrawalRef, type HoldRecord } from '../records/ledger.js';

/**
 * How long past its expiry an RFQ may still be active before the live check calls it overdue. Its quote window
 * and last look end by its expiry (rfq/finalization.ts) and its end is one group commit away, so a minute is
 * far beyond any legitimate wait (a stalled disk included) and still catches an RFQ that will never end.
 */
export const RFQ_OVERDUE_AFTER_EXPIRY_MS = 60_000;

/** Every hold-side difference in `store`'s snapshot; `nowMs` (the live check) adds the overdue RFQs. */
export function auditHolds(store: Store, nowMs: number | null): LedgerDifference[] {
  const differences: LedgerDifference[] = [];
  const holds = new Map<string, HoldRecord>();
  for (const { key, value } of table(store, 'holds').getRange()) holds.set(key, value);
  compareBucketsWithHolds(store, holds, differences);

  const { expected, pools, openRfqs } = holdsFromRecords(store, holds, nowMs !== null);
  for (const [ref, hold] of holds) {
    const want = expected.get(ref);
    if (want === undefined) differences.push(side(hold, 0n, BigInt(hold.amountMicros), 'hold_without_record', ref));
    else if (want.account !== hold.account || want.bucket !== hold.bucket) {
      // Held on the wrong side: the hold is not where its record says, and the record's side has no hold.
      differences.push(side(hold, 0n, BigInt(hold.amountMicros), 'hold_differs', ref));
      differences.push(side(want, BigInt(want.amountMicros), 0n, 'hold_differs', ref));
    } else if (want.amountMicros !== hold.amountMicros) {
      differences.push(side(want, BigInt(want.amountMicros), BigInt(hold.amountMicros), pools.has(ref) ? 'pot' : 'hold_differs', ref));
    }
  }
  for (const [ref, want] of expected) {
    if (!holds.has(ref)) differences.push(side(want, BigInt(want.amountMicros), 0n, pools.has(ref) ? 'pot' : 'record_without_hold', ref));
  }
  if (nowMs !== null) overdueRfqs(openRfqs, nowMs, differences);
  return differences;
}

/** Rule 4: every bucket other than `available` is the sum of its holds. */
function compareBucketsWithHolds(store: Store, holds: ReadonlyMap<string, HoldRecord>, differences: LedgerDifference[]): void {
  const held = new Map<string, { account: string; bucket: string; amount: bigint }>();
  for (const hold of holds.values()) {
    const key = `${hold.account} ${hold.bucket}`;
    const sum = held.get(key);
    if (sum === undefined) held.set(key, { account: hold.account, bucket: hold.bucket, amount: BigInt(hold.amountMicros) });
    else sum.amount += BigInt(hold.amountMicros);
  }
  for (const { key: account, value: record } of table(store, 'accounts').getRange()) {
    for (const [bucket, amount] of Object.entries(record)) {
      if (bucket === 'available') continue;
      const key = `${account} ${bucket}`;
      const inHolds = held.get(key)?.amount ?? 0n;
      const have = BigInt(amount ?? '0');
      if (have !== inHolds) differences.push(difference(account, bucket, inHolds, have, 'holds'));
      held.delete(key);
    }
  }
  // Holds on a bucket the account never had: money held that no bucket shows.
  for (const { account, bucket, amount } of held.values()) {
    if (amount !== 0n) differences.push(difference(account, bucket, amount, 0n, 'holds'));
  }
}

/**
 * Every reference that should hold money now, from the records that say so (`holds`: what is held, which
 * tells, entry by entry, where a settling contest's stakes are). `pools`: the contests' pool references.
 * `openRfqs`: the RFQs not terminal.
 *
 * An RFQ holds its wager while its record is not terminal. On a stopped service's data only a record marked
 * active counts: the next start ends those, and an unmarked one would stay pending forever. A live service
 * commits an RFQ's create unmarked when its end was decided in the same group commit, and that end can still
 * turn into another quote's turn (a fill the maker no longer covers: rfq-writes.ts createInTxn, commitFill),
 * so there an RFQ found through its hold counts too, and the overdue rule is what sees one that never ends.
 */
export function holdsFromRecords(
  store: Store,
  holds: ReadonlyMap<string, HoldRecord>,
  isLive: boolean,
): { expected: Map<string, HoldRecord>; pools: Set<string>; openRfqs: RfqRecord[] } {
  const expected = new Map<string, HoldRecord>();
  const pools = new Set<string>();
  const openRfqs: RfqRecord[] = [];
  const rfqs = table(store, 'rfqs');
  const expectRfq = (requestId: string) => {
    const ref = rfqRef(requestId);
    if (expected.has(ref)) return;
    const record = rfqs.get(requestId);
    if (record === undefined || isTerminal(record.status)) return;
    openRfqs.push(record);
    expected.set(ref, { account: userAccount(record.userId), bucket: 'reserved', amountMicros: record.wagerMicros });
  };
  for (const requestId of table(store, 'rfqActive').getKeys()) expectRfq(requestId);
  if (isLive) {
    for (const ref of holds.keys()) {
      const requestId = requestIdOfRfqRef(ref);
      if (requestId !== null) expectRfq(requestId);
    }
  }
  for (const { value: fill } of table(store, 'fills').getRange()) {
    if (fill.settledPaidMicros !== null) continue;
    const ref = rfqRef(fill.requestId);
    expected.set(ref, { account: userAccount(fill.userId), bucket: 'at_risk', amountMicros: fill.filledWagerMicros });
    const liability = BigInt(fill.payoutMicros) - BigInt(fill.filledWagerMicros);
    if (liability > 0n)
      expected.set(lockRef(ref), { account: makerAccount(fill.makerAddress), bucket: 'locked', amountMicros: liability.toString() });
  }
  for (const { value: contest } of table(store, 'contests').getRange()) {
    if (contest.status !== 'open') continue;
    const pool = poolRef(contest.contestId);
    pools.add(pool);
    expected.set(pool, { account: PROTOCOL, bucket: 'committed', amountMicros: expectedPot(store, contest, holds, expected).toString() });
  }
  for (const key of table(store, 'withdrawalsByStatus').getKeys({ start: 'pending|', end: 'pending|~' })) {
    const withdrawal = table(store, 'withdrawals').get(key.slice(key.lastIndexOf('|') + 1));
    if (withdrawal !== undefined) {
      expected.set(withdrawalRef(withdrawal.withdrawalId), {
        account: withdrawal.account,
        bucket: 'pending_withdrawal',
        amountMicros: withdrawal.amountMicros,
      });
    }
  }
  return { expected, pools, openRfqs };
}

/**
 * What an open contest's pool holds at this commit, from its entries, and each unsettled entry's expected hold
 * into `expected`. The pool opens with the prize pool; a resolution collects every stake into it (an entry's
 * hold gone, its record unsettled) and then pays each prize out of it (the entry settled); a void refunds each
 * stake from its own hold and never touches the pool. Which settlement runs is in `settling`; before its first
 * record is written (the first batch's commits come first), a settled entry can only be a void's refund, since
 * a resolution writes its record between collecting and paying.
 */
function expectedPot(
  store: Store,
  contest: ContestRecord,
  holds: ReadonlyMap<string, HoldRecord>,
  expected: Map<string, HoldRecord>,
): bigint {
  let collected = 0n;
  let paid = 0n;
  let isAnySettled = false;
  const uncollected: Array<[ref: string, hold: HoldRecord]> = [];
  for (const { value: entry } of table(store, 'contestEntries').getRange(contestEntryRange(contest.contestId))) {
    const ref = entryRef(entry);
    if (entry.settlement !== null) {
      isAnySettled = true;
      paid += BigInt(entry.settlement.payoutMicros);
      collected += BigInt(entry.stakeMicros);
      continue;
    }
    const stake: HoldRecord = { account: userAccount(entry.userId), bucket: 'reserved', amountMicros: String(entry.stakeMicros) };
    if (holds.has(ref)) expected.set(ref, stake);
    else uncollected.push([ref, stake]);
  }
  const kind = contest.settling?.kind ?? (isAnySettled ? 'void' : 'resolve');
  if (kind === 'void') {
    // Nothing was collected: an unsettled entry without its hold lost its stake.
    for (const [ref, stake] of uncollected) expected.set(ref, stake);
    return BigInt(contest.protocolPrizePoolMicros);
  }
  for (const [, stake] of uncollected) collected += BigInt(stake.amountMicros);
  return BigInt(contest.protocolPrizePoolMicros) + collected - paid;
}

/** An RFQ not terminal, past its expiry by more than RFQ_OVERDUE_AFTER_EXPIRY_MS: it will not end by itself. */
function overdueRfqs(openRfqs: readonly RfqRecord[], nowMs: number, differences: LedgerDifference[]): void {
  for (const record of openRfqs) {
    if (nowMs - record.expiresAtMs <= RFQ_OVERDUE_AFTER_EXPIRY_MS) continue;
    differences.push(
      difference(userAccount(record.userId), 'reserved', 0n, BigInt(record.wagerMicros), 'overdue', rfqRef(record.requestId)),
    );
  }
}

/** The request id of an RFQ's reservation or stake reference (`rfq:<id>`), null for any other reference. */
function requestIdOfRfqRef(ref: string): string | null {
  const prefix = rfqRef('');
  if (!ref.startsWith(prefix) || ref.endsWith(lockRef(''))) return null;
  return ref.slice(prefix.length);
}

function difference(
  account: string,
  bucket: string,
  expected: bigint,
  actual: bigint,
  reason: LedgerDifferenceReason,
  ref?: string,
): LedgerDifference {
  const found: LedgerDifference = { account, bucket, expected_micros: expected.toString(), actual_micros: actual.toString(), reason };
  if (ref !== undefined) found.ref = ref;
  return found;
}

const side = (at: HoldRecord, expected: bigint, actual: bigint, reason: LedgerDifferenceReason, ref: string) =>
  difference(at.account, at.bucket, expected, actual, reason, ref);
