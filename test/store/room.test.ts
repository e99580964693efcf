// store/room.ts on a real full disk (issue 21): the store's data on a small tmpfs, filled by its own writes
// through the synchronous group commit (a shard's): a commit that fails for want of space rejects with
// StorageFullError (503), new work is refused (assertRoom), a write of accepted work retried by untilWritten
// commits once the tmpfs is grown, new work is taken again, and a fresh reader finds exactly the acknowledged
// records. Needs root and mount; skipped elsewhere.
//
// The main thread's way (lmdb-js's asynchronous transactions) is not tested here: on a failed commit lmdb-js
// leaves a promise of its batch rejected and unhandled (its event-turn batch's commit promise), which the
// service's guard (room.ts guardCommitFailures) swallows but node:test reports as a failure of the test.
// test/store/disk-full.test.ts covers it in the real service (a contest with an image on the full disk).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { openStore, type Store } from '../../src/store/db.js';
import { mountTmpfs, resizeTmpfs, unmountTmpfs } from '../helpers/tmpfs.js';
import { ROOM_CHECK_INTERVAL_MS, StorageFullError } from '../../src/store/room.js';

const TMPFS_MB = 2;
const VALUE = 'x'.repeat(3000); // one overflow page each: the disk fills in a few hundred records
const MAX_WRITES = 10_000;

/** Writes ten records a transaction until one is refused (returned); `keys` gets the acknowledged ones. */
async function fill(store: Store, keys: string[]): Promise<unknown> {
  for (let i = 0; i < MAX_WRITES; i += 10) {
    const batch = Array.from({ length: 10 }, (_, j) => `k${keys.length + j}`);
    try {
      await store.transact(() => {
        for (const key of batch) void store.db<string>('meta').put(key, VALUE);
      });
      keys.push(...batch);
    } catch (err) {
      return err;
    }
  }
  return assert.fail('the disk never filled');
}

async function countOnDisk(dataDir: string): Promise<number> {
  const store = openStore(dataDir, { mapSizeBytes: 64 * 1024 * 1024 });
  try {
    return [...store.db<string>('meta').getKeys({ start: 'k', end: 'k~' })].length;
  } finally {
    await store.close();
  }
}

describe('store room on a full disk (issue 21)', () => {
  const probe = mountTmpfs(TMPFS_MB, 'parlayd-room-');
  const skip = probe === null ? 'needs root and a tmpfs mount' : false;
  if (probe !== null) unmountTmpfs(probe);

  for (const isGroupCommit of [true]) {
    it('group commit (a shard): 503, refusal, retry until room, nothing lost', { skip }, async () => {
      // A tmpfs of its own: a new environment on a full filesystem dies with SIGBUS (docs/reliability.md).
      const mountPoint = mountTmpfs(TMPFS_MB, 'parlayd-room-');
      assert.ok(mountPoint !== null);
      const dataDir = join(mountPoint, 'data');
      try {
        await fullDiskRound(mountPoint, dataDir, isGroupCommit);
      } finally {
        unmountTmpfs(mountPoint);
      }
    });
  }
});

async function fullDiskRound(mountPoint: string, dataDir: string, isGroupCommit: boolean): Promise<void> {
  // A 64 MiB limit over a 2 MiB disk: the disk is what fills.
  const store = openStore(dataDir, { isGroupCommit, mapSizeBytes: 64 * 1024 * 1024 });
  const keys: string[] = [];
  try {
    const refusal = await fill(store, keys);
    assert.ok(refusal instanceof StorageFullError, `refused with ${String(refusal)}`);
    assert.equal(refusal.status, 503);
    assert.ok(keys.length > 0);
    assert.throws(() => store.assertRoom(), StorageFullError, 'new work is refused');
    assert.equal(store.room.status().is_refusing, true);

    // Accepted work retries; the disk grows meanwhile; the write commits without anyone calling again.
    // Twenty new pages: more than the pages freed by earlier commits, which LMDB would reuse without the disk.
    const retried = Array.from({ length: 20 }, (_, i) => `retried-${i}`);
    let waits = 0;
    const writing = store.room.untilWritten(
      () =>
        store.transact(() => {
          for (const key of retried) void store.db<string>('meta').put(`k${key}`, VALUE);
        }),
      () => void waits++,
    );
    await sleep(300);
    assert.ok(waits >= 1, 'the write was refused at least once');
    resizeTmpfs(mountPoint, 16); // 14 MiB free: past the disk reserve (8 MiB for a 64 MiB limit)
    // The retry's timer is unref'd (it must not hold a stopping service); this test has nothing else running.
    const keepAlive = setInterval(() => undefined, 1000);
    try {
      await writing;
    } finally {
      clearInterval(keepAlive);
    }
    keys.push(...retried);
    // A write that committed after a failure lifts the refusal; statfs is read again within 50 ms.
    await sleep(2 * ROOM_CHECK_INTERVAL_MS);
    store.assertRoom();
    await store.transact(() => void store.db<string>('meta').put('knew', VALUE));
    keys.push('new');
  } finally {
    await store.close();
  }
  assert.equal(await countOnDisk(dataDir), keys.length, 'a fresh reader finds exactly the acknowledged records');
}
