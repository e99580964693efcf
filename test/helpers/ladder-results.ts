// Ladder results shaped as bench/load's runLadder writes them, for the tests of what bench:load computes from
// them (scenario `ab`'s medians, the summary's verdicts) without running a ladder.
import type { LadderStep } from '../../bench/load/scenarios/rfq-ladder.js';

/** A step's latency summary, p90 and above at `p99Ms`. */
export const latency = (p50Ms: number, p99Ms: number) => ({
  count: 1,
  p50Ms,
  p90Ms: p99Ms,
  p99Ms,
  p999Ms: p99Ms,
  maxMs: p99Ms,
  meanMs: p50Ms,
});

/** A 5-second step at `offeredPerS` that did all it was offered, unsaturated, unless `overrides` say otherwise. */
export function ladderStep(offeredPerS: number, overrides: Partial<LadderStep> = {}): LadderStep {
  return {
    offeredPerS,
    seconds: 5,
    scheduled: offeredPerS * 5,
    sent: offeredPerS * 5,
    completed: offeredPerS * 5,
    errors: 0,
    isSaturated: false,
    throughputPerS: offeredPerS,
    latency: latency(1, 4),
    sendLag: latency(0, 0),
    isSaturatedStep: false,
    cpu: { serverPercent: 100, clientPercent: 30 },
    ...overrides,
  };
}
