// The cluster's partitions (src/cluster/partitions.ts): a name's partition agrees with the owner routing of one
// process for every power-of-two owner count (so a process's placement is a partition map's), the text of
// PARLAYD_PARTITIONS is read or refused with one line, and a map gives every partition exactly one owner.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { PARTITIONS, PartitionMap, parsePartitions, partitionOfName, partitionOfUser } from '../../src/cluster/partitions.js';
import { ownerOfName } from '../../src/engine/routing.js';
import { creditRef, makerAccount, PROTOCOL, userAccount } from '../../src/records/ledger.js';
import { shardOfUser } from '../../src/rfq/ids.js';

test('for 1, 2, 4 … 256 owners a name lands on partition mod owners: where one process of that many shards puts it', () => {
  const name = fc.oneof(
    fc.uuid().map(userAccount),
    fc.stringMatching(/^[0-9a-f]{40}$/).map((hex) => makerAccount(`0x${hex}`)),
    fc.string({ minLength: 1, maxLength: 40 }).map(creditRef),
    fc.constant(PROTOCOL),
  );
  fc.assert(
    fc.property(name, fc.integer({ min: 0, max: 8 }), (account, log2) => {
      const owners = 2 ** log2;
      assert.equal(partitionOfName(account) % owners, ownerOfName(owners)(account));
    }),
  );
  fc.assert(fc.property(fc.uuid(), (userId) => assert.equal(partitionOfUser(userId), shardOfUser(userId, PARTITIONS))));
  assert.equal(partitionOfName(PROTOCOL), 0, 'the protocol on partition 0');
});

test('PARLAYD_PARTITIONS: ranges and numbers read in order; anything else refused with one line naming it', () => {
  assert.deepEqual(parsePartitions('0-3'), [0, 1, 2, 3]);
  assert.deepEqual(parsePartitions('200, 5-6'), [5, 6, 200]);
  assert.equal(parsePartitions('0-255').length, PARTITIONS);
  for (const [text, message] of [
    ['', /"" is not a number or a range/],
    ['0-', /"0-" is not a number or a range/],
    ['a', /"a" is not a number or a range/],
    ['5-3', /"5-3" is not within 0-255/],
    ['250-256', /"250-256" is not within 0-255/],
    ['1,0-2', /1 is named twice/],
  ] as const) {
    assert.throws(() => parsePartitions(text), message, text);
  }
});

test('a partition map: each owner named by its first partition, every partition one owner’s', () => {
  const map = PartitionMap.of(['128-255', '0-63', '64-127']);
  assert.deepEqual(map.owners, [0, 64, 128]);
  assert.equal(map.ownerOfPartition(100), 64);
  assert.deepEqual(map.partitionsOf(64).length, 64);
  const maker = makerAccount('0x00000000000000000000000000000000000000aa');
  const partition = partitionOfName(maker);
  assert.equal(map.ownerOf(maker), partition < 64 ? 0 : partition < 128 ? 64 : 128);
  assert.throws(() => PartitionMap.of(['0-127']), /partition 128 has no owner/);
  assert.throws(() => PartitionMap.of(['0-128', '128-255']), /128 is given to two owners/);
});
