// A turn's declines packed for the trip to the shard (src/rfq/pack-declines.ts): whatever the batch, the
// shard handles the same messages in the same order as if each decline had travelled alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { MainToShard } from '../../src/rfq/messages.js';
import { packDeclines } from '../../src/rfq/pack-declines.js';

/** What the shard does with a packed batch (rfq/shard.ts handle): each `declines` as its declines, in order. */
function unpacked(batch: MainToShard[]): MainToShard[] {
  return batch.flatMap((message): MainToShard[] =>
    message.kind === 'declines'
      ? message.makerIds.map((makerId) => ({ kind: 'decline', requestId: message.requestId, makerId }))
      : [message],
  );
}

const requestId = fc.constantFrom('r1', 'r2', 'r3');
const makerId = fc.constantFrom('m1', 'm2', 'm3', 'm4');
const message: fc.Arbitrary<MainToShard> = fc.oneof(
  fc.record({ kind: fc.constant('decline' as const), requestId, makerId }),
  fc.record({ kind: fc.constant('decline' as const), requestId, makerId }),
  fc.record({ kind: fc.constant('maker_disconnected' as const), makerId }),
  fc.record({ kind: fc.constant('audience' as const), requestId, makerIds: fc.array(makerId, { maxLength: 3 }) }),
  fc.record({ kind: fc.constant('quote_cancel' as const), requestId, makerId, quoteId: fc.constantFrom('q1', 'q2') }),
);

test('any batch: the packed one unpacks to it exactly, and no two packed runs of one RFQ are neighbours', () => {
  fc.assert(
    fc.property(fc.array(message, { maxLength: 40 }), (generated) => {
      const batch = structuredClone(generated); // plain objects, as messages are (fast-check's have no prototype)
      const copy = structuredClone(batch);
      const packed = packDeclines(batch);
      assert.deepEqual(batch, copy, 'the batch itself is left as it was');
      assert.deepEqual(unpacked(packed), batch);
      assert.ok(
        packed.every((m) => m.kind !== 'decline'),
        'every decline travels packed',
      );
      for (let i = 1; i < packed.length; i++) {
        const [before, after] = [packed[i - 1]!, packed[i]!];
        if (before.kind === 'declines' && after.kind === 'declines') assert.notEqual(before.requestId, after.requestId);
      }
    }),
    { numRuns: 2_000 },
  );
});

test('a fan-out turn: a thousand declines of two RFQs become two messages; a batch without declines is not copied', () => {
  const makers = Array.from({ length: 1_000 }, (_, i) => `m${i}`);
  const batch: MainToShard[] = [
    ...makers.slice(0, 600).map((m): MainToShard => ({ kind: 'decline', requestId: 'r1', makerId: m })),
    ...makers.slice(600).map((m): MainToShard => ({ kind: 'decline', requestId: 'r2', makerId: m })),
  ];
  assert.deepEqual(packDeclines(batch), [
    { kind: 'declines', requestId: 'r1', makerIds: makers.slice(0, 600) },
    { kind: 'declines', requestId: 'r2', makerIds: makers.slice(600) },
  ]);
  const none: MainToShard[] = [{ kind: 'maker_disconnected', makerId: 'm1' }];
  assert.equal(packDeclines(none), none);
});
