// ops/fast-histogram.ts against prom-client's own Histogram as the oracle: the same observations must print
// the same /metrics lines (bucket counts are cumulative, le="+Inf" equals the count, sums agree).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Histogram, Registry } from 'prom-client';
import { FastHistogram } from '../../src/ops/fast-histogram.js';
import { LATENCY_BUCKETS_S } from '../../src/ops/metrics.js';

const NAME = 'parlayd_test_seconds';
const HELP = 'test histogram';

/** Values on, below, between and above the bounds, and zero. */
const OBSERVATIONS: Array<[string, number]> = [
  ['GET', 0],
  ['GET', 0.00005],
  ['GET', 0.00004],
  ['GET', 0.0003],
  ['POST', 0.0003],
  ['GET', 0.001],
  ['GET', 9.9],
  ['GET', 10],
  ['GET', 42],
  ['POST', 0.5],
  ['POST', 0.25000001],
];

test('prints the same lines as prom-client for the same labelled observations', async () => {
  const oracleRegistry = new Registry();
  const oracle = new Histogram({ name: NAME, help: HELP, labelNames: ['method'], buckets: LATENCY_BUCKETS_S, registers: [oracleRegistry] });
  const fastRegistry = new Registry();
  const fast = new FastHistogram(NAME, HELP, ['method'], LATENCY_BUCKETS_S, fastRegistry);
  for (const [method, seconds] of OBSERVATIONS) {
    oracle.observe({ method }, seconds);
    fast.series({ method }).observe(seconds);
  }
  const lines = async (registry: Registry) => (await registry.metrics()).trim().split('\n').sort();
  const expected = await lines(oracleRegistry);
  assert.ok(expected.length > 2 * (LATENCY_BUCKETS_S.length + 3), 'the oracle printed every series');
  assert.deepEqual(await lines(fastRegistry), expected);
});

test('an unlabelled histogram observes on its one series', async () => {
  const registry = new Registry();
  const fast = new FastHistogram(NAME, HELP, [], [0.1, 1], registry);
  fast.observe(0.05);
  fast.observe(0.5);
  fast.observe(5);
  const text = await registry.metrics();
  assert.match(text, /^parlayd_test_seconds_bucket\{le="0.1"\} 1$/m);
  assert.match(text, /^parlayd_test_seconds_bucket\{le="1"\} 2$/m);
  assert.match(text, /^parlayd_test_seconds_bucket\{le="\+Inf"\} 3$/m);
  assert.match(text, /^parlayd_test_seconds_count 3$/m);
  assert.match(text, /^parlayd_test_seconds_sum 5.55$/m);
});
