// Main thread, at start, before any other thread opens the store. A data directory records the layout
// version it was written in (`meta` key `schemaVersion`); one written by an earlier version is brought up to
// this one in one transaction, and one written by a later version is refused with a message that says so,
// never read wrongly.
//
// Each step brings the layout one version up, all of them in one transaction:
// - 3 added each user's history indexes (`userRfqs`, `userEntries`), built from the records.
// - 4 added each maker's fills by taker (`makerTakerFills`), built from the fills.
// - 5 is the two-sided money model (records/ledger.ts): accounts of users, makers and the protocol whose
//   buckets only transfers change. The one-sided balances before it cannot say who owes a filled position
//   or a contest's pool, so money that is held (an open RFQ, an unsettled position or contest entry) is not
//   carried over: such a directory is refused, with what to do. Every user's available balance is carried
//   over as an opening transfer from outside (counted in credited_micros by the ledger check), and every
//   open contest's prize pool likewise into the protocol's committed bucket, so those contests can settle.
//   Versions 1 and 2 always held money per user in the old form and migrate the same way.
import type { Logger } from 'pino';
import { userEntryKey } from '../records/contests.js';
import { userRfqKey } from '../records/rfqs.js';
import { makerTakerFillKey } from '../records/fills.js';
import { poolRef, PROTOCOL, userAccount } from '../records/ledger.js';
import { Ledger, NO_USERS } from '../ledger/ledger.js';
import { UnsupportedDataError, type Store } from '../store/db.js';
import { metaTable, table } from '../store/records.js';

export const SCHEMA_VERSION = 5;
const VERSION_KEY = 'schemaVersion';

export async function migrateStore(store: Store, log: Logger, nowMs = Date.now()): Promise<void> {
  const meta = metaTable<number>(store);
  const found = meta.get(VERSION_KEY);
  if (found === SCHEMA_VERSION) return;
  if (found !== undefined && found > SCHEMA_VERSION) {
    throw new UnsupportedDataError(
      `the data directory was written by a newer parlayd (layout ${found}; this one reads up to ${SCHEMA_VERSION}): run that version, or start with another PARLAYD_DATA_DIR`,
    );
  }
  const isEmpty = table(store, 'balances').getKeysCount({ limit: 1 }) === 0 && table(store, 'rfqs').getKeysCount({ limit: 1 }) === 0;
  const from = found ?? 1;
  const counts = await store.transact(() => {
    const done = { historyRows: 0, takerRows: 0, openingBalances: 0 };
    if (!isEmpty) {
      if (from < 3) done.historyRows = buildHistoryIndexesInTxn(store);
      if (from < 4) done.takerRows = buildTakerIndexInTxn(store);
      if (from < 5) done.openingBalances = openTwoSidedLedgerInTxn(store, nowMs);
    }
    void meta.put(VERSION_KEY, SCHEMA_VERSION);
    return done;
  });
  if (!isEmpty) log.info({ from, to: SCHEMA_VERSION, ...counts }, 'data directory migrated');
}

/** Version 5: see the header. Throws UnsupportedDataError (nothing written) when money is held. */
function openTwoSidedLedgerInTxn(store: Store, nowMs: number): number {
  const balances = table(store, 'balances');
  for (const { key: userId, value } of balances.getRange()) {
    if (BigInt(value.reservedMicros) !== 0n || BigInt(value.atRiskMicros) !== 0n) {
      throw new UnsupportedDataError(
        `cannot migrate the data directory to the two-sided money model: user ${userId} has money reserved or at risk ` +
          `(open RFQs, unsettled positions or contest entries). Run the previous parlayd on it until every market of ` +
          `those positions and contests has resolved and settled, then start this version; or start with another PARLAYD_DATA_DIR`,
      );
    }
  }
  // The holds of versions 2-4 (none holds money any more: checked above) are of the old form.
  for (const key of table(store, 'holds').getKeys()) void table(store, 'holds').remove(key);
  const ledger = new Ledger(store, NO_USERS);
  let opened = 0;
  for (const { key: userId, value } of balances.getRange()) {
    const available = BigInt(value.availableMicros);
    if (available > 0n) {
      ledger.opening({ account: userAccount(userId), bucket: 'available' }, available, `opening:${userId}`, nowMs);
      opened++;
    }
  }
  for (const { value: contest } of table(store, 'contests').getRange()) {
    if (contest.status !== 'open') continue;
    const pool = BigInt(contest.protocolPrizePoolMicros);
    if (pool > 0n) ledger.opening({ account: PROTOCOL, bucket: 'committed' }, pool, `opening:${poolRef(contest.contestId)}`, nowMs);
    void table(store, 'holds').put(poolRef(contest.contestId), { account: PROTOCOL, bucket: 'committed', amountMicros: pool.toString() });
    opened++;
  }
  // The old forms, now carried over: the balances and their journal.
  for (const key of table(store, 'balances').getKeys()) void table(store, 'balances').remove(key);
  for (const key of table(store, 'journal').getKeys()) void table(store, 'journal').remove(key);
  return opened;
}

/** Version 4: every fill in its maker's by-taker index. */
function buildTakerIndexInTxn(store: Store): number {
  let rows = 0;
  for (const { value: fill } of table(store, 'fills').getRange()) {
    void table(store, 'makerTakerFills').put(makerTakerFillKey(fill.makerAddress, fill.taker, fill.atMs, fill.requestId), true);
    rows++;
  }
  return rows;
}

/** Version 3: every RFQ and contest entry in its user's history index. */
function buildHistoryIndexesInTxn(store: Store): number {
  let rows = 0;
  for (const { value: rfq } of table(store, 'rfqs').getRange()) {
    void table(store, 'userRfqs').put(userRfqKey(rfq.userId, rfq.createdAtMs, rfq.requestId), true);
    rows++;
  }
  for (const { value: entry } of table(store, 'contestEntries').getRange()) {
    void table(store, 'userEntries').put(userEntryKey(entry.userId, entry.createdAtMs, entry.contestId, entry.entryIndex), true);
    rows++;
  }
  return rows;
}
