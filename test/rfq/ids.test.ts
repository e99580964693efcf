// rfq/ids.ts: request ids are lowercase hyphenated UUIDs (contract section 1) that name their shard in the
// first byte and sort by creation time within a shard.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { newRequestId, shardOfRequest, shardOfUser } from '../../src/rfq/ids.js';

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

test('takers spread evenly over the shards, each always on the same one', () => {
  const users = Array.from({ length: 8_000 }, () => randomUUID());
  for (const shardCount of [2, 3, 4]) {
    const counts = new Array<number>(shardCount).fill(0);
    for (const user of users) counts[shardOfUser(user, shardCount)]! += 1;
    for (const count of counts) {
      const share = count / users.length;
      assert.ok(Math.abs(share - 1 / shardCount) < 0.03, `shares over ${shardCount} shards: ${counts.join(', ')}`);
    }
  }
  assert.ok(users.every((user) => shardOfUser(user, 4) === shardOfUser(user, 4)));
  assert.equal(shardOfUser('any user', 1), 0);
});
