// The record modules check what they read (store/record-check.ts): a malformed record put straight into LMDB
// makes the read that meets it fail with MalformedRecordError, naming the database and the key, instead of
// handing the record to a view or a settlement. A well-formed record reads back as written.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ContestRecords } from '../../src/contests/contest-records.js';
import { userEntriesPage } from '../../src/contests/history.js';
import { entryKey, userEntryKey } from '../../src/records/contests.js';
import { journalKey, userAccount } from '../../src/records/ledger.js';
import { accountJournalPage } from '../../src/ledger/journal-view.js';
import { fillKey } from '../../src/records/fills.js';
import { userRfqsPage } from '../../src/rfq/history.js';
import { makerFillsPage } from '../../src/rfq/maker-fills-view.js';
import { userRfqKey, type RfqRecord } from '../../src/records/rfqs.js';
import { readFill, readRfq } from '../../src/rfq/rfq-records.js';
import { TerminalResults } from '../../src/rfq/terminal-results.js';
import { openStore, type DbName, type Store } from '../../src/store/db.js';
import { MalformedRecordError } from '../../src/store/record-check.js';
import { putRawRecord } from '../helpers/store-writes.js';

const MAKER = '0x' + 'a'.repeat(40);
const noMarkets = () => undefined;

function rfqRecord(userId: string, requestId: string): RfqRecord {
  return {
    requestId,
    userId,
    wallet: '0x' + '1'.repeat(40),
    kind: 'unsigned',
    legs: [{ marketId: 1, direction: 'up' }],
    wagerMicros: '1000000',
    minOddsE4: 10_000,
    toleranceBps: 0,
    orderType: 2,
    isShielded: false,
    createdAtMs: 1_000,
    expiresAtMs: 2_000,
    status: 'timeout',
    quotesReceived: 0,
    fill: null,
    error: null,
    terminalAtMs: 2_000,
  };
}

/** Asserts that `read` fails with the error naming `db` and `key`. */
function assertMalformed(read: () => unknown, db: DbName, key: string): void {
  assert.throws(read, (err: unknown) => {
    assert.ok(err instanceof MalformedRecordError, `not a MalformedRecordError: ${String(err)}`);
    assert.deepEqual([err.db, err.key], [db, key]);
    assert.match(err.message, new RegExp(`^malformed record in database '${db}' at key "${key.replace(/[|.]/g, '\\$&')}": \\S`));
    return true;
  });
}

describe('checked reads of the record modules', () => {
  let dir: string;
  let store: Store;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'parlayd-record-check-'));
    store = openStore(dir);
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads a well-formed RFQ record back as written', async () => {
    const userId = randomUUID();
    const requestId = randomUUID();
    await putRawRecord(store, 'rfqs', requestId, rfqRecord(userId, requestId));
    await putRawRecord(store, 'userRfqs', userRfqKey(userId, 1_000, requestId), true);
    assert.deepEqual(readRfq(store, requestId), rfqRecord(userId, requestId));
    assert.deepEqual(
      userRfqsPage(store, userId, { status: undefined, limit: 10, after: null }).rfqs.map((r) => r.request_id),
      [requestId],
    );
  });

  it('an RFQ record missing a field, or with a wrong one, fails the history page, GET /v1/rfq/:id and settlement reads', async () => {
    const userId = randomUUID();
    const requestId = randomUUID();
    const { wallet: _dropped, ...withoutWallet } = rfqRecord(userId, requestId);
    await putRawRecord(store, 'rfqs', requestId, withoutWallet);
    await putRawRecord(store, 'userRfqs', userRfqKey(userId, 1_000, requestId), true);
    assertMalformed(() => readRfq(store, requestId), 'rfqs', requestId);
    assertMalformed(() => userRfqsPage(store, userId, { status: undefined, limit: 10, after: null }), 'rfqs', requestId);
    assertMalformed(() => new TerminalResults(store).lookup(requestId), 'rfqs', requestId);

    const otherId = randomUUID();
    await putRawRecord(store, 'rfqs', otherId, { ...rfqRecord(userId, otherId), wagerMicros: 1_000_000 });
    assertMalformed(() => readRfq(store, otherId), 'rfqs', otherId);
  });

  it("a malformed fill fails the maker's fills page", async () => {
    const requestId = randomUUID();
    await putRawRecord(store, 'fills', fillKey(MAKER, requestId), { requestId, makerAddress: MAKER, legs: 'not legs' });
    assertMalformed(() => readFill(store, MAKER, requestId), 'fills', fillKey(MAKER, requestId));
    assertMalformed(
      () => makerFillsPage(store, noMarkets, MAKER, { status: undefined, limit: 10, afterRequestId: null }),
      'fills',
      fillKey(MAKER, requestId),
    );
  });

  it("a malformed journal row fails the account's journal page", async () => {
    const account = userAccount(randomUUID());
    const key = journalKey(account, 1_000, 'credit:k/credit');
    await putRawRecord(store, 'accountJournal', key, {
      transferId: 'credit:k/credit',
      kind: 'credit',
      ref: 'credit:k',
      atMs: 1_000,
      deltas: [['available', 'ten']],
    });
    assertMalformed(() => accountJournalPage(store, account, { limit: 10, after: null }), 'accountJournal', key);
  });

  it("a malformed contest or entry fails the user's entries page and the walks over a contest's entries", async () => {
    const userId = randomUUID();
    const contestId = randomUUID();
    await putRawRecord(store, 'contests', contestId, { contestId, title: 'no status' });
    await putRawRecord(store, 'userEntries', userEntryKey(userId, 1_000, contestId, 0), true);
    const records = new ContestRecords(store);
    assertMalformed(() => records.contest(contestId), 'contests', contestId);
    assertMalformed(() => userEntriesPage(store, noMarkets, userId, { limit: 10, after: null }), 'contests', contestId);

    const key = entryKey(contestId, userId, 0);
    await putRawRecord(store, 'contestEntries', key, { contestId, userId, entryIndex: 0, picks: null });
    assertMalformed(() => [...records.entriesAfter(contestId, null)], 'contestEntries', key);
    assertMalformed(() => records.entry(contestId, userId, 0), 'contestEntries', key);
  });
});
