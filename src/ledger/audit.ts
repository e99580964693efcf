// Any thread; reads only. Checks the users' money against everything it is derived from, from one read
// snapshot (LMDB readers never block writers):
//   - each user's buckets equal what the user's journal adds up to, movement by movement;
//   - each user's reserved and at-risk totals equal the user's holds (ledger.ts), hold by hold;
//   - each hold is for something that still holds money: an RFQ that is active (reserved) or filled and
//     unsettled (at risk), or an unsettled entry of an open contest; and each of those has its hold.
// What it returns lists every difference; an empty list is a ledger that agrees with itself. Tests run it
// after crashes (test/rfq/owner-crash.test.ts); contract section 11's admin check will build on it.
import type { ContestRecord, EntryRecord } from '../contests/records.js';
import { contestEntryRange, entryRef } from '../contests/records.js';
import type { FillRecord } from '../rfq/fills.js';
import { isTerminal, rfqRef, type RfqRecord } from '../rfq/records.js';
import type { Store } from '../store/db.js';
import { readBalance, readJournal, type Balance, type HoldRecord, type JournalEntry } from './ledger.js';

export interface AuditReport {
  users: number;
  holds: number;
  differences: string[];
}

export function auditLedger(store: Store): AuditReport {
  const differences: string[] = [];
  const holds = new Map<string, HoldRecord>();
  for (const { key, value } of store.db<HoldRecord>('holds').getRange()) holds.set(key, value);

  const heldByUser = new Map<string, { reserved: bigint; atRisk: bigint }>();
  for (const hold of holds.values()) {
    const total = heldByUser.get(hold.userId) ?? { reserved: 0n, atRisk: 0n };
    if (hold.bucket === 'reserved') total.reserved += BigInt(hold.amountMicros);
    else total.atRisk += BigInt(hold.amountMicros);
    heldByUser.set(hold.userId, total);
  }

  let users = 0;
  for (const userId of store.db('balances').getKeys()) {
    users++;
    const balance = readBalance(store, userId);
    const replayed = replayJournal(readJournal(store, userId));
    for (const bucket of ['availableMicros', 'reservedMicros', 'atRiskMicros', 'creditedMicros', 'pnlMicros'] as const) {
      if (balance[bucket] !== replayed[bucket]) differences.push(`user ${userId}: ${bucket} is ${balance[bucket]}, its journal adds up to ${replayed[bucket]}`);
    }
    const held = heldByUser.get(userId) ?? { reserved: 0n, atRisk: 0n };
    if (held.reserved !== balance.reservedMicros) differences.push(`user ${userId}: reserved ${balance.reservedMicros}, holds ${held.reserved}`);
    if (held.atRisk !== balance.atRiskMicros) differences.push(`user ${userId}: at risk ${balance.atRiskMicros}, holds ${held.atRisk}`);
  }

  const expected = holdsFromRecords(store);
  for (const [ref, hold] of holds) {
    const want = expected.get(ref);
    if (want === undefined) differences.push(`hold ${ref} is for nothing that holds money`);
    else if (want.bucket !== hold.bucket || want.amountMicros !== hold.amountMicros || want.userId !== hold.userId) {
      differences.push(`hold ${ref} is ${JSON.stringify(hold)}, its record says ${JSON.stringify(want)}`);
    }
  }
  for (const ref of expected.keys()) if (!holds.has(ref)) differences.push(`${ref} holds money but has no hold`);
  return { users, holds: holds.size, differences };
}

/** Pure. A user's buckets as the journal's movements, oldest first, make them. */
export function replayJournal(journal: readonly JournalEntry[]): Balance {
  const b: Balance = { availableMicros: 0n, reservedMicros: 0n, atRiskMicros: 0n, creditedMicros: 0n, pnlMicros: 0n };
  for (const { kind, amounts } of journal) {
    const a = (name: string) => BigInt(amounts[name] ?? '0');
    switch (kind) {
      case 'credit':
        b.availableMicros += a('amountMicros');
        b.creditedMicros += a('amountMicros');
        break;
      case 'reserve':
        b.availableMicros -= a('amountMicros');
        b.reservedMicros += a('amountMicros');
        break;
      case 'release':
        b.reservedMicros -= a('amountMicros');
        b.availableMicros += a('amountMicros');
        break;
      case 'fill':
        b.reservedMicros -= a('reservedMicros');
        b.atRiskMicros += a('filledMicros');
        b.availableMicros += a('reservedMicros') - a('filledMicros');
        break;
      case 'settle_at_risk':
        b.atRiskMicros -= a('stakeMicros');
        b.availableMicros += a('payoutMicros');
        b.pnlMicros += a('payoutMicros') - a('stakeMicros');
        break;
      case 'settle_reserved':
        b.reservedMicros -= a('stakeMicros');
        b.availableMicros += a('payoutMicros');
        b.pnlMicros += a('payoutMicros') - a('stakeMicros');
        break;
      default: {
        const unknown: never = kind;
        throw new Error(`unknown movement ${String(unknown)}`);
      }
    }
  }
  return b;
}

/** Every reference that should hold money now, from the records that say so (also how migrations.ts rebuilds them). */
export function holdsFromRecords(store: Store): Map<string, HoldRecord> {
  const expected = new Map<string, HoldRecord>();
  const rfqs = store.db<RfqRecord>('rfqs');
  for (const requestId of store.db<true>('rfqActive').getKeys()) {
    const record = rfqs.get(requestId);
    if (record !== undefined && !isTerminal(record.status)) {
      expected.set(rfqRef(requestId), { userId: record.userId, bucket: 'reserved', amountMicros: record.wagerMicros });
    }
  }
  for (const { value: fill } of store.db<FillRecord>('fills').getRange()) {
    if (fill.settledPaidMicros === null) {
      expected.set(rfqRef(fill.requestId), { userId: fill.userId, bucket: 'at_risk', amountMicros: fill.filledWagerMicros });
    }
  }
  const entries = store.db<EntryRecord>('contestEntries');
  for (const { value: contest } of store.db<ContestRecord>('contests').getRange()) {
    if (contest.status !== 'open') continue;
    for (const { value: entry } of entries.getRange(contestEntryRange(contest.contestId))) {
      if (entry.settlement === null) {
        expected.set(entryRef(entry), { userId: entry.userId, bucket: 'reserved', amountMicros: String(entry.stakeMicros) });
      }
    }
  }
  return expected;
}
