// The journal engine's first start on a directory of the lmdb engine's layout (src/engine/first-start.ts,
// from-store.ts, owner-host.ts), on a real LMDB environment and real journals in a temp dir:
//   - thousands of funded accounts on one owner are journaled in bounded records (one record of them all was
//     over a record's 1 MiB, and every start failed);
//   - a first start that did not finish (no marker) is made again from what LMDB holds: an owner's journal it
//     left behind is not replayed over balances an lmdb-engine start moved since.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Effect } from '../../src/engine/effects.js';
import { prepareOwners } from '../../src/engine/first-start.js';
import { OwnerHost, type OwnerHostOptions } from '../../src/engine/owner-host.js';
import { userAccount } from '../../src/records/ledger.js';
import { openStore } from '../../src/store/db.js';
import { metaTable } from '../../src/store/records.js';
import { appliedSeqKey } from '../../src/store/write-behind.js';
import { ownerDir } from '../../src/rfq/journal-durability.js';
import { soleOwnerOptions } from '../helpers/owner-host.js';
import { putRawRecord } from '../helpers/store-writes.js';

const hostOptions = (dir: string, firstRecord?: Effect[]): OwnerHostOptions =>
  soleOwnerOptions(dir, { maxPendingBytes: 2 << 20, ...(firstRecord === undefined ? {} : { firstRecord }) });

/** What from-store.ts makes of an account's available balance: an opening transfer from the world. */
function opening(userId: string, amountMicros: bigint): Effect {
  const account = userAccount(userId);
  const ref = `opening:${account}`;
  const transfer = {
    id: `${ref}/available`,
    kind: 'opening' as const,
    ref,
    debit: null,
    credit: { account, bucket: 'available' as const },
    amountMicros,
    atMs: 0,
  };
  return { t: 'transfer', transfer, half: 'both' };
}

test('an owner with 7,000 funded accounts starts: its opening state is journaled in bounded records, and a reopen holds every balance', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-first-record-'));
  try {
    // UUID-like ids, as users have: ~160 bytes an opening transfer, ~1.1 MB for all of them in one record.
    const ids = Array.from({ length: 7_000 }, (_, i) => `0000${i}`.padStart(36, 'u'));
    const firstRecord = ids.map((id, i) => opening(id, BigInt(i + 1)));
    let host = OwnerHost.open(hostOptions(dir, firstRecord));
    assert.equal(host.recovery.lastSeq, 0);
    await host.close();
    host = OwnerHost.open(hostOptions(dir));
    assert.ok(host.recovery.replayedRecords >= 7, `${host.recovery.replayedRecords} records`);
    for (const [i, id] of ids.entries()) assert.equal(host.owner.book.available(userAccount(id)), BigInt(i + 1), id);
    await host.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a first start that did not finish is made again from LMDB: the journal it left is not replayed over what LMDB holds now', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-first-start-'));
  const store = openStore(dataDir);
  try {
    // The earlier first start: owner 0 journaled its opening state (5 micros), its read model passed it, and
    // the start went no further (no marker).
    const dir = ownerDir(dataDir, 0);
    mkdirSync(dir, { recursive: true });
    const stale = OwnerHost.open(hostOptions(dir, [opening('alice', 5n)]));
    await stale.close();
    await putRawRecord(store, 'meta', appliedSeqKey('owner-0'), 1);
    // Then the lmdb engine ran on the directory and moved alice's balance to 9.
    await putRawRecord(store, 'accounts', userAccount('alice'), { available: '9', reserved: '0', at_risk: '0', pending_withdrawal: '0' });

    const start = prepareOwners(store, dataDir, 1);
    assert.ok(start.firstRecords !== undefined, 'no marker: a first start');
    assert.equal(existsSync(dir), false, 'the unfinished start’s journal is gone');
    assert.equal(metaTable<number>(store).get(appliedSeqKey('owner-0')), undefined, 'and its read model position');
    mkdirSync(dir, { recursive: true });
    const host = OwnerHost.open(hostOptions(dir, start.firstRecords[0]));
    assert.equal(host.owner.book.available(userAccount('alice')), 9n, 'LMDB’s balance, not the stale journal’s');
    start.markStarted();
    await host.close();
    assert.deepEqual(readdirSync(join(dataDir, 'engine')).sort(), ['owner-0', 'owners.json']);
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
