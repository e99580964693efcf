// The early close's count (active-rfq.ts awaitingCount): under any interleaving of audiences (a first one, and
// later ones adding connections), answers (from the audience, or from a connection it does not hold yet) and
// connections closing, "every audience member answered" is exactly what a walk of the audience says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { addAudience, hasAllResponded, markResponded, newActiveRfq, removeFromAudience } from '../../src/rfq/active-rfq.js';
import type { RfqRecord } from '../../src/records/rfqs.js';

const RECORD = { requestId: 'r', wagerMicros: '1' } as RfqRecord;
const makerId = fc.constantFrom('m0', 'm1', 'm2', 'm3', 'm4', 'm5');
const step = fc.oneof(
  fc.record({ kind: fc.constant('audience' as const), makerIds: fc.array(makerId, { maxLength: 4 }) }),
  fc.record({ kind: fc.constant('answer' as const), makerId }),
  fc.record({ kind: fc.constant('close' as const), makerId }),
);

test('the count agrees with a walk of the audience after every step', () => {
  fc.assert(
    fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
      const rfq = newActiveRfq(RECORD, { _timer: 0 }, false);
      for (const s of steps) {
        if (s.kind === 'audience') addAudience(rfq, s.makerIds);
        else if (s.kind === 'answer') {
          // The actor takes an answer only from the audience; the helper must hold either way.
          markResponded(rfq, s.makerId);
        } else removeFromAudience(rfq, s.makerId);
        const walked = rfq.audience !== null && [...rfq.audience].every((id) => rfq.responded.has(id));
        assert.equal(hasAllResponded(rfq), walked, JSON.stringify(steps));
        assert.ok(rfq.awaitingCount >= 0);
      }
    }),
    { numRuns: 2_000 },
  );
});

test('an audience of 1,000 answering in its own order closes on the last answer, not before', () => {
  const rfq = newActiveRfq(RECORD, { _timer: 0 }, false);
  const ids = Array.from({ length: 1_000 }, (_, i) => `m${i}`);
  addAudience(rfq, ids);
  for (const id of ids.slice(0, -1)) {
    markResponded(rfq, id);
    assert.equal(hasAllResponded(rfq), false);
  }
  markResponded(rfq, ids.at(-1)!);
  assert.equal(hasAllResponded(rfq), true);
});
