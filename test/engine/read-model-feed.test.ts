// What an owner's read model writes wait on (src/engine/read-model-feed.ts), with the real writer on a real
// LMDB: writes leave only once their record is durable, in order; the owner reads the latest write of a key,
// whether it still waits here, waits in the writer, or is in LMDB; a barrier resolves once LMDB has them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ReadModelFeed } from '../../src/engine/read-model-feed.js';
import { openStore } from '../../src/store/db.js';
import { WriteBehind } from '../../src/store/write-behind.js';

test('the owner reads the latest write of a key while its records wait, are handed on, and are committed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-feed-'));
  const store = openStore(dir);
  let feed: ReadModelFeed | null = null;
  const writer = new WriteBehind(store, {
    owner: 'owner-0',
    intervalMs: 60_000, // commits only when flushed
    maxBatchWrites: 1_000,
    maxPendingWrites: 10_000,
    onApplied: () => feed?.drain(),
    onCommitFailure: (error) => assert.fail(error as Error),
  });
  try {
    feed = new ReadModelFeed(writer, 10_000, 0);
    feed.add(1, [
      { db: 'rfqActive', key: 'a', value: true },
      { db: 'rfqActive', key: 'b', value: true },
    ]);
    feed.add(2, [{ db: 'rfqActive', key: 'a', value: undefined }]);
    assert.equal(writer.pendingWrites, 0, 'nothing durable yet: nothing handed on');
    assert.equal(feed.get('rfqActive', 'a'), undefined, "record 2's remove, the latest");
    assert.equal(feed.get('rfqActive', 'b'), true);
    feed.durable(1);
    assert.equal(writer.pendingWrites, 2, 'record 1 handed on, record 2 still waits');
    assert.equal(feed.get('rfqActive', 'a'), undefined, 'still the latest: record 2 waits here');
    assert.equal(feed.get('rfqActive', 'b'), true, "record 1's write, now the writer's");
    const barrier = feed.barrier(2);
    feed.durable(2);
    await barrier;
    assert.equal(store.db('rfqActive').get('a'), undefined);
    assert.equal(store.db('rfqActive').get('b'), true);
    assert.equal(feed.get('rfqActive', 'b'), true, 'from LMDB');
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
