// rfq/ids.ts: request ids are lowercase hyphenated UUIDs (contract section 1) that name their shard in the
// first byte and sort by creation time within a shard.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newRequestId, shardOfRequest } from '../../src/rfq/ids.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('a request id is a version-7 UUID that names its shard', () => {
  for (const shard of [0, 1, 7, 200, 255]) {
    const id = newRequestId(shard, 1_764_000_000_000);
    assert.match(id, UUID);
    assert.equal(shardOfRequest(id, 256), shard);
    assert.equal(shardOfRequest(id, shard), null, 'a shard that is not running is named by no id');
  }
});

test('within a shard, ids sort by creation time, and ids of the same millisecond differ', () => {
  const t0 = 1_764_000_000_000;
  const ids = [t0, t0 + 1, t0 + 1000, t0 + 3_600_000, t0 + 86_400_000 * 365].map((ms) => newRequestId(3, ms));
  assert.deepEqual([...ids].sort(), ids);
  const sameMs = new Set(Array.from({ length: 10_000 }, () => newRequestId(3, t0)));
  assert.equal(sameMs.size, 10_000);
});
