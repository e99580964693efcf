// The summary's verdicts on the RFQ-path targets (bench/load/report.ts targetRows) with scenario
// `storage-bound`: a target the service misses is "missed; so does the storage bound" only when the service
// with LMDB never flushed misses it too, and plain "missed" when that bound meets it or was not run. Ladder
// results are shaped as runLadder writes them; the ladders themselves run in bench:load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { targetRows, type Results } from '../../bench/load/report.js';
import type { LadderResult, LadderStep } from '../../bench/load/scenarios/rfq-ladder.js';
import { ladderStep, latency } from '../helpers/ladder-results.js';

function step(offeredPerS: number, p50Ms: number, p99Ms: number, isSaturatedStep = false): LadderStep {
  return ladderStep(offeredPerS, {
    latency: latency(p50Ms, p99Ms),
    isSaturatedStep,
    throughputPerS: isSaturatedStep ? offeredPerS * 0.7 : offeredPerS,
  });
}

/** A ladder up to its last step; sustained is the last unsaturated step's rate, as runLadder computes it. */
function ladder(steps: LadderStep[], admissionOfRecoveryBound: number | null = null): LadderResult {
  const unsaturated = steps.filter((s) => !s.isSaturatedStep).map((s) => s.throughputPerS);
  return {
    kind: 'unsigned',
    admission: { reqPerS: 4000, latency: latency(1, 2) },
    recoveryBound: admissionOfRecoveryBound === null ? null : { reqPerS: 10_000 },
    admissionOfRecoveryBound,
    steps,
    sustainedPerS: Math.max(0, ...unsaturated),
    peakPerS: Math.max(0, ...steps.map((s) => s.throughputPerS)),
    recoveriesPerSAllCores: 30_000,
  } as unknown as LadderResult;
}

const verdicts = (results: Results) => new Map(targetRows(results).map((row) => [row.target, row.verdict]));
const at2000 = 'unsigned @ 2,000/s, 10 makers: p50 ≤ 2 ms, p99 ≤ 10 ms, no errors';
const at4000 = 'unsigned @ 4,000/s, 10 makers: p99 ≤ 10 ms, no errors';
const sustained = 'unsigned sustained ≥ 5,000 RFQ/s (open loop, 10 makers)';
const signedTarget = 'signed admission ≥ 50 % of the recovery bound (HTTP + recovery only, every core, same client)';

// The service: 2,000/s at p50 40 ms, saturated at 3,000/s; signed admission 30 % of its bound.
const service = ladder([step(1000, 8, 40), step(2000, 40, 120), step(3000, 900, 2000, true)]);
const signedService = ladder([], 0.3);

test('a target the storage bound misses too is marked so; one it meets stays plainly missed', () => {
  const boundMissingAll = {
    unsigned: ladder([step(1000, 4, 30), step(2000, 16, 60), step(3000, 800, 1500, true)]),
    signed: ladder([], 0.4),
  };
  const all = verdicts({ unsigned: service, signed: signedService, 'storage-bound': boundMissingAll } as unknown as Results);
  for (const target of [at2000, at4000, sustained, signedTarget])
    assert.equal(all.get(target), 'missed; so does the storage bound', target);

  // A bound that meets the 2,000/s, 4,000/s and signed targets: those are storage's to win, so plain "missed".
  const boundMeeting = {
    unsigned: ladder([step(2000, 1.5, 8), step(4000, 3, 9), step(6000, 700, 1400, true)]),
    signed: ladder([], 0.55),
  };
  const some = verdicts({ unsigned: service, signed: signedService, 'storage-bound': boundMeeting } as unknown as Results);
  assert.equal(some.get(at2000), 'missed');
  assert.equal(some.get(at4000), 'missed');
  assert.equal(some.get(signedTarget), 'missed');
  // 4,000/s sustained, not 5,000: the bound misses that one.
  assert.equal(some.get(sustained), 'missed; so does the storage bound');
});

test('without scenario storage-bound, a missed target is plainly missed, and a met one met', () => {
  const alone = verdicts({ unsigned: service, signed: signedService } as unknown as Results);
  for (const target of [at2000, at4000, sustained, signedTarget]) assert.equal(alone.get(target), 'missed', target);
  const fast = ladder([step(2000, 1.2, 6), step(4000, 2, 8), step(6000, 3, 9), step(8000, 900, 1900, true)]);
  const met = verdicts({
    unsigned: fast,
    signed: ladder([], 0.6),
    'storage-bound': { unsigned: fast, signed: ladder([], 0.6) },
  } as unknown as Results);
  for (const target of [at2000, at4000, sustained, signedTarget]) assert.equal(met.get(target), 'met', target);
});
