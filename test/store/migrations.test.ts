// A data directory written by the previous layout (version 1: per-user totals, no holds) is migrated at start:
// its holds are rebuilt from the records they stand for, and the service then runs on it as on its own data
// (an RFQ active at the last stop is failed and its wager released through its rebuilt hold). One written by
// a newer layout, or one whose totals the records do not explain, is refused with one line saying why.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { auditLedger } from '../../src/ledger/audit.js';
import { readBalance, readHold } from '../../src/ledger/ledger.js';
import type { RfqRecord } from '../../src/rfq/records.js';
import { openStore } from '../../src/store/db.js';
import { SCHEMA_VERSION } from '../../src/store/migrations.js';
import { startServer } from '../helpers/server.js';

const WAGER = 2_000_000;

/** What version 1 wrote for a user with one active RFQ: the totals, the journal, the records; no holds. */
async function writeVersion1(dataDir: string, reservedMicros: number): Promise<{ userId: string; requestId: string }> {
  const store = openStore(dataDir);
  const userId = randomUUID();
  const requestId = randomUUID();
  await store.transact(() => {
    void store.db('balances').put(userId, {
      availableMicros: String(10_000_000 - WAGER),
      reservedMicros: String(reservedMicros),
      atRiskMicros: '0',
      creditedMicros: String(10_000_000 - WAGER + reservedMicros),
      pnlMicros: '0',
      journalSeq: 2,
    });
    void store.db('journal').put(`${userId}:000000000001`, { kind: 'credit', amounts: { amountMicros: String(10_000_000 - WAGER + reservedMicros) }, ref: 'credit:k', atMs: 1 });
    void store.db('journal').put(`${userId}:000000000002`, { kind: 'reserve', amounts: { amountMicros: String(reservedMicros) }, ref: `rfq:${requestId}`, atMs: 2 });
    const record: RfqRecord = {
      requestId, userId, wallet: `0x${'ab'.repeat(20)}`, kind: 'unsigned', legs: [{ marketId: 1, direction: 'up' }],
      wagerMicros: String(WAGER), minOddsE4: 15_000, toleranceBps: 50, orderType: 2, isShielded: false,
      createdAtMs: 1, expiresAtMs: 2, status: 'pending', quotesReceived: 0, fill: null, error: null, terminalAtMs: null,
    };
    void store.db('rfqs').put(requestId, record);
    void store.db('rfqActive').put(requestId, true);
  });
  await store.close();
  return { userId, requestId };
}

test('a version-1 data directory is migrated: holds rebuilt, then the restart releases the active RFQ through its hold', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-v1-'));
  const { userId, requestId } = await writeVersion1(dataDir, WAGER);
  const server = await startServer({ dataDir });
  assert.ok(server.logs.some((l) => l['msg'] === 'data directory migrated' && l['holds'] === 1 && l['historyRows'] === 1 && l['takerRows'] === 0 && l['from'] === 1));
  assert.ok(server.logs.some((l) => l['msg'] === 'RFQs active at the last stop ended failed SERVICE_RESTARTED'));
  assert.equal(await server.stop(), 0);

  const store = openStore(dataDir);
  try {
    assert.equal(store.db('meta').get('schemaVersion'), SCHEMA_VERSION);
    assert.equal(readHold(store, `rfq:${requestId}`), undefined, 'released with its RFQ');
    const balance = readBalance(store, userId);
    assert.deepEqual([balance.availableMicros, balance.reservedMicros], [10_000_000n, 0n]);
    assert.equal(store.db<RfqRecord>('rfqs').get(requestId)?.error, 'SERVICE_RESTARTED');
    assert.deepEqual(auditLedger(store).differences, []);
    assert.deepEqual([...store.db('userRfqs').getKeys()], [`${userId}:${'1'.padStart(16, '0')}:${requestId}`], 'its history index');
  } finally {
    await store.close();
  }
});

test('a data directory whose totals its records do not explain is refused with one line, and left as it was', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-v1-'));
  await writeVersion1(dataDir, WAGER + 1); // one micro reserved for nothing
  await assert.rejects(startServer({ dataDir }), /data directory error: cannot migrate the data directory: user .* has reserved 2000001/);
  const store = openStore(dataDir);
  try {
    assert.equal(store.db('meta').get('schemaVersion'), undefined);
    assert.equal(store.db('holds').getKeysCount(), 0);
  } finally {
    await store.close();
  }
});

test('a data directory written by a newer layout is refused, never read', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-v9-'));
  const store = openStore(dataDir);
  await store.transact(() => store.db('meta').put('schemaVersion', SCHEMA_VERSION + 1));
  await store.close();
  await assert.rejects(startServer({ dataDir }), /written by a newer parlayd \(layout 5; this one reads up to 4\)/);
});
