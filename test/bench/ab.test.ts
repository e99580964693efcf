// Scenario `ab`'s arithmetic (bench/load/scenarios/ab.ts): which runs a step's medians are taken from, and the
// B / A ratios, on ladder results shaped as runLadder writes them. The ladders themselves run in bench:load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { median, summarizeAb } from '../../bench/load/scenarios/ab.js';
import type { LadderResult, LadderStep } from '../../bench/load/scenarios/rfq-ladder.js';
import { ladderStep, latency } from '../helpers/ladder-results.js';

function step(offeredPerS: number, p50Ms: number, persistMs: number | null, isSaturatedStep = false): LadderStep {
  return ladderStep(offeredPerS, {
    throughputPerS: offeredPerS - 1,
    latency: latency(p50Ms, p50Ms * 4),
    isSaturatedStep,
    cpu: { serverPercent: offeredPerS / 10, clientPercent: 20 },
    // Quoting as half the p50, so that its medians differ from persist's; as many transactions per commit as the p50.
    ...(persistMs === null
      ? {}
      : {
          stages: { parlayd_rfq_persist_seconds: persistMs, parlayd_rfq_quoting_seconds: p50Ms / 2 },
          commits: { commits: 10, transactions: p50Ms * 10 },
        }),
  });
}

function ladder(admissionPerS: number, steps: LadderStep[]): LadderResult {
  return { admission: { reqPerS: admissionPerS }, steps } as unknown as LadderResult;
}

test('median: the middle value, or the mean of the two middle ones; null for none', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(median([]), null);
});

test('summarizeAb: per offered rate, each side is the median of the runs that reached it, and B / A', () => {
  const a = [
    ladder(5000, [step(250, 4, 2), step(1000, 10, 4), step(2000, 40, 12)]),
    ladder(5200, [step(250, 6, 2.2), step(1000, 12, 5), step(2000, 60, 16, true)]),
  ];
  // B's second run saturated at 1,000/s and stopped there, and its first kept no stage means.
  const b = [
    ladder(6000, [step(250, 3, null), step(1000, 8, null), step(2000, 20, null)]),
    ladder(6400, [step(250, 2, 1), step(1000, 30, 3, true)]),
  ];
  const { admissionPerS, rows } = summarizeAb(a, b);
  assert.deepEqual(admissionPerS, { a: 5100, b: 6200, ratio: Math.round((6200 / 5100) * 1000) / 1000 });
  assert.deepEqual(
    rows.map((r) => r.offeredPerS),
    [250, 1000, 2000],
  );
  const [at250, at1000, at2000] = rows;
  assert.deepEqual(at250!.p50Ms, { a: 5, b: 2.5, ratio: 0.5 });
  // Only the run that has stage means counts for persist.
  assert.deepEqual(at250!.persistMeanMs, { a: 2.1, b: 1, ratio: Math.round((1 / 2.1) * 1000) / 1000 });
  // And for the commits: transactions per commit of each run that has them.
  assert.deepEqual(at250!.transactionsPerCommit, { a: 5, b: 2, ratio: 0.4 });
  assert.deepEqual(at1000!.saturated, { a: 0, b: 1 });
  assert.deepEqual(at1000!.p50Ms, { a: 11, b: 19, ratio: Math.round((19 / 11) * 1000) / 1000 });
  assert.deepEqual(at1000!.quotingMeanMs, { a: 5.5, b: 15, ratio: Math.round((15 / 5.5) * 1000) / 1000 });
  assert.deepEqual(at2000!.runs, { a: 2, b: 1 });
  assert.deepEqual(at2000!.saturated, { a: 1, b: 0 });
  assert.deepEqual(at2000!.p50Ms, { a: 50, b: 20, ratio: 0.4 });
  assert.deepEqual(at2000!.persistMeanMs, { a: 14, b: null, ratio: null });
  assert.deepEqual(at2000!.serverCpuPercent, { a: 200, b: 200, ratio: 1 });
});

test('summarizeAb: the main thread from every build, the shard threads only from a build that reports thread roles', () => {
  const withThreads = (offeredPerS: number, mainPercent: number, shardPercents: number[]): LadderStep => ({
    ...step(offeredPerS, 5, null),
    cpu: { serverPercent: 100, clientPercent: 20, serverMainThreadPercent: mainPercent },
    threads: Object.fromEntries([['main', mainPercent], ...shardPercents.map((p, i) => [`shard-${i}`, p]), ['other', 7]]),
  });
  const a = [ladder(5000, [withThreads(500, 40, [30, 10])]), ladder(5000, [withThreads(500, 50, [40, 20])])];
  // B is an older build: its main thread is read from /proc, and it names no roles.
  const old = step(500, 5, null);
  const b = [ladder(5000, [{ ...old, cpu: { ...old.cpu, serverMainThreadPercent: 60 } }])];
  const [row] = summarizeAb(a, b).rows;
  assert.deepEqual(row!.mainThreadCpuPercent, { a: 45, b: 60, ratio: Math.round((60 / 45) * 1000) / 1000 });
  assert.deepEqual(row!.shardThreadsCpuPercent, { a: 50, b: null, ratio: null });
});
