// Main thread, at start, before any other thread opens the store. A data directory records the layout
// version it was written in (`meta` key `schemaVersion`); one written by an earlier version is brought up to
// this one in one transaction, and one written by a later version is refused with a message that says so,
// never read wrongly.
//
// Each step brings the layout one version up, all of them in one transaction:
// - 2 added the ledger's holds (ledger.ts): money reserved or at risk is held per reference, so that a
//   release or settlement moves exactly what was held. Version 1 kept only per-user totals; its holds are
//   rebuilt from what they were for: active RFQs (reserved wager), unsettled fills (at-risk stake) and
//   unsettled entries of open contests (reserved stake). Each user's rebuilt holds must add up to the user's
//   reserved and at-risk totals, or the start is refused: the data is not what this version understands.
// - 3 added each user's history indexes (`userRfqs`, `userEntries`: GET /v1/user/rfqs and
//   /v1/user/contest_entries read only the page they answer); they are built from the records. One pass over
//   every RFQ and entry, once.
// - 4 added each maker's fills by taker (`makerTakerFills`: GET /v1/mm/taker_pnl pages by taker), built from
//   the fills.
import type { Logger } from 'pino';
import { holdsFromRecords } from '../ledger/audit.js';
import { readBalance, type HoldRecord } from '../ledger/ledger.js';
import { userEntryKey, type EntryRecord } from '../contests/records.js';
import { userRfqKey, type RfqRecord } from '../rfq/records.js';
import { makerTakerFillKey, type FillRecord } from '../rfq/fills.js';
import type { Store } from './db.js';

export const SCHEMA_VERSION = 4;
const VERSION_KEY = 'schemaVersion';

export class UnsupportedDataError extends Error {}

export async function migrateStore(store: Store, log: Logger): Promise<void> {
  const meta = store.db<number>('meta');
  const found = meta.get(VERSION_KEY);
  if (found === SCHEMA_VERSION) return;
  if (found !== undefined && found > SCHEMA_VERSION) {
    throw new UnsupportedDataError(
      `the data directory was written by a newer parlayd (layout ${found}; this one reads up to ${SCHEMA_VERSION}): run that version, or start with another PARLAYD_DATA_DIR`,
    );
  }
  const isEmpty = store.db('balances').getKeysCount({ limit: 1 }) === 0 && store.db('rfqs').getKeysCount({ limit: 1 }) === 0;
  const from = found ?? 1;
  const counts = await store.transact(() => {
    const done = { holds: 0, historyRows: 0, takerRows: 0 };
    if (!isEmpty) {
      if (from < 2) done.holds = rebuildHoldsInTxn(store);
      if (from < 3) done.historyRows = buildHistoryIndexesInTxn(store);
      if (from < 4) done.takerRows = buildTakerIndexInTxn(store);
    }
    void meta.put(VERSION_KEY, SCHEMA_VERSION);
    return done;
  });
  if (!isEmpty) log.info({ from, to: SCHEMA_VERSION, ...counts }, 'data directory migrated');
}

/** Version 4: every fill in its maker's by-taker index. */
function buildTakerIndexInTxn(store: Store): number {
  let rows = 0;
  for (const { value: fill } of store.db<FillRecord>('fills').getRange()) {
    void store.db<true>('makerTakerFills').put(makerTakerFillKey(fill.makerAddress, fill.taker, fill.atMs, fill.requestId), true);
    rows++;
  }
  return rows;
}

/** Version 3: every RFQ and contest entry in its user's history index. */
function buildHistoryIndexesInTxn(store: Store): number {
  let rows = 0;
  for (const { value: rfq } of store.db<RfqRecord>('rfqs').getRange()) {
    void store.db<true>('userRfqs').put(userRfqKey(rfq.userId, rfq.createdAtMs, rfq.requestId), true);
    rows++;
  }
  for (const { value: entry } of store.db<EntryRecord>('contestEntries').getRange()) {
    void store.db<true>('userEntries').put(userEntryKey(entry.userId, entry.createdAtMs, entry.contestId, entry.entryIndex), true);
    rows++;
  }
  return rows;
}

function rebuildHoldsInTxn(store: Store): number {
  const holds = holdsFromRecords(store);
  const totals = new Map<string, { reserved: bigint; atRisk: bigint }>();
  for (const [ref, hold] of holds) {
    const total = totals.get(hold.userId) ?? { reserved: 0n, atRisk: 0n };
    if (hold.bucket === 'reserved') total.reserved += BigInt(hold.amountMicros);
    else total.atRisk += BigInt(hold.amountMicros);
    totals.set(hold.userId, total);
    void store.db<HoldRecord>('holds').put(ref, hold);
  }
  for (const userId of store.db('balances').getKeys()) {
    const balance = readBalance(store, userId);
    const total = totals.get(userId) ?? { reserved: 0n, atRisk: 0n };
    if (balance.reservedMicros !== total.reserved || balance.atRiskMicros !== total.atRisk) {
      throw new UnsupportedDataError(
        `cannot migrate the data directory: user ${userId} has reserved ${balance.reservedMicros} and at risk ${balance.atRiskMicros}, its RFQs and entries account for ${total.reserved} and ${total.atRisk}`,
      );
    }
  }
  return holds.size;
}
