// A data directory written by an earlier layout is migrated at start. Version 5 is the two-sided money model:
// each user's available balance is carried over as an opening transfer, an open contest's prize pool into the
// protocol's committed bucket, and the service runs on it as on its own data (the ledger check agrees). One
// that still holds money in the old one-sided form (an open RFQ, an unsettled position or entry), or one
// written by a newer layout, is refused with one line saying why and what to do, and left as it was.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { poolRef, PROTOCOL } from '../../src/records/ledger.js';
import { auditLedger } from '../../src/ledger/audit.js';
import { readAccount, readHold, readUserBalance } from '../../src/ledger/ledger.js';
import type { RfqRecord } from '../../src/records/rfqs.js';
import { openStore } from '../../src/store/db.js';
import { migrateStore, SCHEMA_VERSION } from '../../src/boot/migrations.js';
import { createLogger } from '../../src/lib/log.js';
import { startServer } from '../helpers/server.js';
import { client } from '../helpers/http.js';

const WAGER = 2_000_000;

/**
 * What version 1 wrote for a user with one RFQ: the one-sided totals, the journal, the records; no holds.
 * `isActive`: the RFQ is still open, its wager reserved; else it ended and nothing is held.
 */
async function writeVersion1(dataDir: string, isActive: boolean): Promise<{ userId: string; requestId: string }> {
  const store = openStore(dataDir);
  const userId = randomUUID();
  const requestId = randomUUID();
  const reservedMicros = isActive ? WAGER : 0;
  await store.transact(() => {
    void store.db('balances').put(userId, {
      availableMicros: String(10_000_000 - reservedMicros),
      reservedMicros: String(reservedMicros),
      atRiskMicros: '0',
      creditedMicros: '10000000',
      pnlMicros: '0',
      journalSeq: 1,
    });
    void store
      .db('journal')
      .put(`${userId}:000000000001`, { kind: 'credit', amounts: { amountMicros: '10000000' }, ref: 'credit:k', atMs: 1 });
    const record: RfqRecord = {
      requestId,
      userId,
      wallet: `0x${'ab'.repeat(20)}`,
      kind: 'unsigned',
      legs: [{ marketId: 1, direction: 'up' }],
      wagerMicros: String(WAGER),
      minOddsE4: 15_000,
      toleranceBps: 50,
      orderType: 2,
      isShielded: false,
      createdAtMs: 1,
      expiresAtMs: 2,
      status: isActive ? 'pending' : 'timeout',
      quotesReceived: 0,
      fill: null,
      error: null,
      terminalAtMs: isActive ? null : 2,
    };
    void store.db('rfqs').put(requestId, record);
    if (isActive) void store.db('rfqActive').put(requestId, true);
  });
  await store.close();
  return { userId, requestId };
}

test('a version-1 data directory is migrated: balances carried over as opening transfers, the ledger check agrees', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-v1-'));
  const { userId } = await writeVersion1(dataDir, false);
  const server = await startServer({ dataDir });
  assert.ok(
    server.logs.some(
      (l) => l['msg'] === 'data directory migrated' && l['openingBalances'] === 1 && l['historyRows'] === 1 && l['from'] === 1,
    ),
  );
  const check = await client(server.baseUrl, server.adminToken).get('/v1/admin/ledger/check');
  assert.equal(check.status, 200);
  assert.equal(check.body.ok, true, JSON.stringify(check.body));
  assert.equal(check.body.credited_micros, '10000000', 'the carried-over balance counts as credited');
  assert.equal(await server.stop(), 0);

  const store = openStore(dataDir);
  try {
    assert.equal(store.db('meta').get('schemaVersion'), SCHEMA_VERSION);
    assert.deepEqual(readUserBalance(store, userId), {
      availableMicros: 10_000_000n,
      reservedMicros: 0n,
      atRiskMicros: 0n,
      pendingWithdrawalMicros: 0n,
    });
    assert.equal(store.db('balances').getKeysCount(), 0, 'the old form is gone');
    assert.deepEqual(auditLedger(store).differences, []);
  } finally {
    await store.close();
  }
});

test("an open contest's prize pool is carried into the protocol's committed bucket, with its pool's hold", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-v4-'));
  await writeVersion1(dataDir, false);
  const contestId = randomUUID();
  const store = openStore(dataDir);
  await store.transact(() => {
    void store.db('meta').put('schemaVersion', 4);
    void store.db('contests').put(contestId, { contestId, status: 'open', protocolPrizePoolMicros: 700, entriesFilled: 0 });
  });
  try {
    await migrateStore(store, createLogger('silent'));
    assert.deepEqual(readAccount(store, PROTOCOL), { available: 0n, committed: 700n });
    assert.deepEqual(readHold(store, poolRef(contestId)), { account: PROTOCOL, bucket: 'committed', amountMicros: '700' });
  } finally {
    await store.close();
  }
});

test('a data directory that still holds money in the old form is refused with what to do, and left as it was', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-v1-'));
  const { userId } = await writeVersion1(dataDir, true);
  await assert.rejects(
    startServer({ dataDir }),
    /data directory error: cannot migrate .*user .* has money reserved or at risk.*Run the previous parlayd/,
  );
  const store = openStore(dataDir);
  try {
    assert.equal(store.db('meta').get('schemaVersion'), undefined);
    assert.equal(store.db('balances').getKeysCount(), 1, 'nothing was changed');
    assert.equal(store.db('accounts').get(`user:${userId}`), undefined);
  } finally {
    await store.close();
  }
});

test('a data directory written by a newer layout is refused, never read', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-v9-'));
  const store = openStore(dataDir);
  await store.transact(() => store.db('meta').put('schemaVersion', SCHEMA_VERSION + 1));
  await store.close();
  await assert.rejects(startServer({ dataDir }), /written by a newer parlayd \(layout 6; this one reads up to 5\)/);
});
