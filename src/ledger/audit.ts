// Any thread; reads only. Everything the tests check after every end-to-end file (test/helpers/server.ts), the
// chaos rounds and the fuzzer, from one read snapshot (LMDB readers never block writers):
//   - the ledger check (check.ts): every bucket as the transfers make it, none negative, money conserved;
//   - every bucket other than `available` equals the sum of its holds, hold by hold;
//   - each hold is for something that still holds money, with the amount its record says, and each such
//     thing has its hold: an active RFQ (reserved wager), an unsettled fill (the taker's at-risk stake and
//     the maker's locked liability), an open contest (its pool; its unsettled entries' stakes until its
//     settlement begins), a pending withdrawal.
import { contestEntryRange, entryRef } from '../contests/records.js';
import { isTerminal, rfqRef } from '../rfq/records.js';
import type { Store } from '../store/db.js';
import { lockRef, makerAccount, poolRef, PROTOCOL, userAccount, withdrawalRef, type HoldRecord } from './accounts.js';
import { checkLedger } from './check.js';
import { table } from '../store/records.js';

export interface AuditReport {
  accounts: number;
  holds: number;
  differences: string[];
}

export function auditLedger(store: Store): AuditReport {
  const check = checkLedger(store);
  const differences = check.differences.map(
    (d) => `${d.account} ${d.bucket}: ${d.actual_micros}, its transfers add up to ${d.expected_micros}`,
  );
  if (BigInt(check.total_micros) !== BigInt(check.credited_micros) - BigInt(check.withdrawn_micros)) {
    differences.push(
      `money is not conserved: ${check.total_micros} held, ${check.credited_micros} credited − ${check.withdrawn_micros} withdrawn`,
    );
  }

  const holds = new Map<string, HoldRecord>();
  for (const { key, value } of table(store, 'holds').getRange()) holds.set(key, value);
  const held = new Map<string, bigint>();
  for (const hold of holds.values())
    held.set(`${hold.account} ${hold.bucket}`, (held.get(`${hold.account} ${hold.bucket}`) ?? 0n) + BigInt(hold.amountMicros));
  for (const { key: account, value: record } of table(store, 'accounts').getRange()) {
    for (const [bucket, amount] of Object.entries(record)) {
      if (bucket === 'available') continue;
      const inHolds = held.get(`${account} ${bucket}`) ?? 0n;
      if (BigInt(amount ?? '0') !== inHolds) differences.push(`${account} ${bucket}: ${amount}, its holds add up to ${inHolds}`);
      held.delete(`${account} ${bucket}`);
    }
  }
  for (const [side, amount] of held) if (amount !== 0n) differences.push(`holds of ${side} add up to ${amount}, the account has none`);

  const { expected, amountUnchecked } = holdsFromRecords(store);
  for (const [ref, hold] of holds) {
    const want = expected.get(ref);
    if (want === undefined) differences.push(`hold ${ref} is for nothing that holds money`);
    else if (
      want.bucket !== hold.bucket ||
      want.account !== hold.account ||
      (!amountUnchecked.has(ref) && want.amountMicros !== hold.amountMicros)
    ) {
      differences.push(`hold ${ref} is ${JSON.stringify(hold)}, its record says ${JSON.stringify(want)}`);
    }
  }
  for (const ref of expected.keys())
    if (!holds.has(ref) && !amountUnchecked.has(ref)) differences.push(`${ref} holds money but has no hold`);
  return { accounts: check.accounts, holds: holds.size, differences };
}

/**
 * Every reference that should hold money now, from the records that say so. A contest being settled is in
 * between: its pool's amount and its unsettled entries' holds change batch by batch (`amountUnchecked`: the
 * pool's amount is not checked, and an entry's hold may be there or not).
 */
export function holdsFromRecords(store: Store): { expected: Map<string, HoldRecord>; amountUnchecked: Set<string> } {
  const expected = new Map<string, HoldRecord>();
  const amountUnchecked = new Set<string>();
  const rfqs = table(store, 'rfqs');
  for (const requestId of table(store, 'rfqActive').getKeys()) {
    const record = rfqs.get(requestId);
    if (record !== undefined && !isTerminal(record.status)) {
      expected.set(rfqRef(requestId), { account: userAccount(record.userId), bucket: 'reserved', amountMicros: record.wagerMicros });
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
  const entries = table(store, 'contestEntries');
  for (const { value: contest } of table(store, 'contests').getRange()) {
    if (contest.status !== 'open') continue;
    const pool = poolRef(contest.contestId);
    expected.set(pool, { account: PROTOCOL, bucket: 'committed', amountMicros: String(contest.protocolPrizePoolMicros) });
    const isSettling = contest.settling !== undefined;
    if (isSettling) amountUnchecked.add(pool);
    for (const { value: entry } of entries.getRange(contestEntryRange(contest.contestId))) {
      if (entry.settlement !== null) continue;
      const ref = entryRef(entry);
      expected.set(ref, { account: userAccount(entry.userId), bucket: 'reserved', amountMicros: String(entry.stakeMicros) });
      // Collected into the pot already, or not yet: either is right while the contest settles.
      if (isSettling) amountUnchecked.add(ref);
    }
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
  return { expected, amountUnchecked };
}
