// A bug found by test/ledger/properties.test.ts, in the store, not the ledger: a record shape first written in
// a transaction that rolls back (store.transact, a throw in fn) stays in msgpackr's in-memory shared
// structures (store/db.ts, sharedStructuresKey) though its save was rolled back. The same shape written again
// is encoded against a structure the disk never got; the next new shape saves a structure list that
// disagrees with it, and records stop decoding ("Unexpected end of MessagePack data"), after a reopen too.
// store/db.ts now drops the in-memory structures after every rolled-back transaction (forgetUnsavedStructures).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { openStore } from '../../src/store/db.js';

it('records stay readable after a transaction that wrote a new record shape rolled back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-structures-'));
  let store = openStore(dir, { mapSizeBytes: 64 * 1024 * 1024 });
  try {
    const accounts = () => store.db<Record<string, string>>('accounts');
    await store.transact(() => void accounts().put('a', { available: '1' }));
    await assert.rejects(
      store.transact(() => {
        void accounts().put('p', { available: '1', committed: '2' }); // a shape never seen before
        throw new Error('rolled back');
      }),
    );
    await store.transact(() => void accounts().put('p', { available: '1', committed: '2' }));
    await store.transact(() => void accounts().put('u', { available: '1', reserved: '0', pending_withdrawal: '3' }));
    const want = [
      { key: 'a', value: { available: '1' } },
      { key: 'p', value: { available: '1', committed: '2' } },
      { key: 'u', value: { available: '1', reserved: '0', pending_withdrawal: '3' } },
    ];
    assert.deepEqual([...accounts().getRange()], want);
    await store.close();
    store = openStore(dir);
    assert.deepEqual([...accounts().getRange()], want, 'and after a reopen');
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
