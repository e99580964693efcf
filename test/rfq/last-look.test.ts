// Pure: when a last look may be offered and until when (src/rfq/last-look.ts, issue 33 item 7), on a clock
// given by hand. Each row is one rule; the shard's use of it is in shard-timing.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideLastLook, MAX_LAST_LOOKS_PER_MAKER_PER_RFQ, type LastLookInput } from '../../src/rfq/last-look.js';

const T0 = 1_800_000_000_000;
const base: LastLookInput = {
  nowMs: T0,
  lastLookMs: 200,
  expiresAtMs: T0 + 60_000,
  maxFinalizingMs: 1_000,
  firstOfferAtMs: null,
  offersToMaker: 0,
};

const rows: [string, Partial<LastLookInput>, ReturnType<typeof decideLastLook>][] = [
  ['the first offer runs last_look_ms', {}, { kind: 'offer', deadlineMs: T0 + 200 }],
  ['an offer never runs past the expiry', { expiresAtMs: T0 + 150 }, { kind: 'offer', deadlineMs: T0 + 150 }],
  ['past the expiry nobody is asked', { nowMs: T0 + 150, expiresAtMs: T0 + 150 }, { kind: 'pass', reason: 'past_expiry' }],
  [
    'a later offer runs to the bound at most: first offer + max_finalizing_ms',
    { nowMs: T0 + 900, firstOfferAtMs: T0 },
    { kind: 'offer', deadlineMs: T0 + 1_000 },
  ],
  ['1 ms before the bound a maker is still asked', { nowMs: T0 + 999, firstOfferAtMs: T0 }, { kind: 'offer', deadlineMs: T0 + 1_000 }],
  ['at the bound nobody is asked', { nowMs: T0 + 1_000, firstOfferAtMs: T0 }, { kind: 'pass', reason: 'past_bound' }],
  ['a bound shorter than a last look cuts the first one', { maxFinalizingMs: 50 }, { kind: 'offer', deadlineMs: T0 + 50 }],
  [
    'a maker offered its share is passed over',
    { nowMs: T0 + 400, firstOfferAtMs: T0, offersToMaker: MAX_LAST_LOOKS_PER_MAKER_PER_RFQ },
    { kind: 'pass', reason: 'maker_limit' },
  ],
  [
    'one offer short of its share, it is asked',
    { nowMs: T0 + 200, firstOfferAtMs: T0, offersToMaker: MAX_LAST_LOOKS_PER_MAKER_PER_RFQ - 1 },
    { kind: 'offer', deadlineMs: T0 + 400 },
  ],
];

for (const [rule, input, expected] of rows) {
  test(rule, () => assert.deepEqual(decideLastLook({ ...base, ...input }), expected));
}
