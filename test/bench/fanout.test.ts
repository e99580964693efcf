// Scenario `fanout`'s arithmetic and its bare reference (bench/load/bare-fanout-server.ts), without timing
// (speed lives in bench/, never in npm test): the targets are ratios to the bare server of the same run, the
// closed loop's callers shrink as makers grow, and the bare server sends the service's own rfq frame to
// every socket and answers a POST once every socket has declined, as the service's wait_ms answer does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from '@sinclair/typebox/value';
import { RfqMessage } from '../../src/contract/mm.js';
import { fanoutTargetRows } from '../../bench/load/report.js';
import { MakerFarm } from '../../bench/load/makers.js';
import { RawWebSocket } from '../../bench/load/raw-ws.js';
import { spawnListening } from '../../bench/load/scenarios/ceiling.js';
import { closedLoopCallers, type FanoutSideResult, type FanoutStep } from '../../bench/load/scenarios/fanout.js';

function side(deliveriesPerS: number, p99Ms: number): FanoutSideResult {
  const latency = { count: 300, p50Ms: p99Ms / 2, p90Ms: p99Ms / 2, p99Ms, p999Ms: p99Ms, maxMs: p99Ms, meanMs: p99Ms / 2 };
  return {
    samples: 300,
    missedReceipts: 0,
    lastMaker: latency,
    firstMaker: latency,
    concurrency: 32,
    closedLoopP50Ms: 0,
    rfqPerS: 0,
    deliveriesPerS,
    errors: 0,
    shed: 2,
    connectMs: 0,
    connectRetries: 0,
    settleMs: 0,
  };
}

function step(makers: number, service: FanoutSideResult, bare: FanoutSideResult | null): FanoutStep {
  return { makers, ...service, serverBroadcastMs: 0, bare, vsBare: null };
}

test('the fan-out targets are the service over the bare server of the same step, unrounded', () => {
  const rows = (steps: FanoutStep[]) => fanoutTargetRows({ steps }).map((r) => [r.target, r.measured, r.ratio, r.verdict]);
  const met = rows([step(1000, side(35_000, 80), side(50_000, 20)), step(10_000, side(20_000, 100), side(40_000, 50))]);
  assert.deepEqual(met, [
    [
      'fanout to 1,000 makers: deliveries/s ≥ 0.7 × bare',
      '35000 deliveries/s (bare 50000), p99 80 ms (bare 20 ms), 2 shed',
      "deliveries 0.7×, p99 4× the bare server's",
      'met',
    ],
    [
      'fanout to 10,000 makers: deliveries/s ≥ 0.5 × bare, last-maker p99 ≤ 2 × bare',
      '20000 deliveries/s (bare 40000), p99 100 ms (bare 50 ms), 2 shed',
      "deliveries 0.5×, p99 2× the bare server's",
      'met',
    ],
  ]);
  // Just under each bound: 0.6999 of the bare deliveries, and a p99 of 2.0002 times the bare one.
  const missed = rows([step(1000, side(34_995, 10), side(50_000, 20)), step(10_000, side(40_000, 100.01), side(40_000, 50))]);
  assert.deepEqual(
    missed.map((r) => r[3]),
    ['missed', 'missed'],
  );
  // A step without its bare reference (a result from before it existed) or a size not run has no verdict.
  assert.deepEqual(
    rows([step(1000, side(35_000, 80), null)]).map((r) => [r[1], r[3]]),
    [
      ['-', 'not run'],
      ['-', 'not run'],
    ],
  );
});

test('the closed loop keeps 32 callers up to 1,000 makers, then about 32,000 rfq frames in flight', () => {
  assert.deepEqual([1, 10, 100, 1000, 5000, 10_000, 100_000].map(closedLoopCallers), [32, 32, 32, 32, 6, 3, 1]);
});

test('the bare fan-out server sends the service rfq frame to every socket and answers once all declined', async () => {
  const { child, port } = await spawnListening('bare-fanout-server.js', []);
  const farm = new MakerFarm(2);
  const frames: string[] = [];
  const own = new RawWebSocket(port, '/v1/mm/ws');
  try {
    await new Promise<void>((resolve, reject) => {
      own.onError = reject;
      own.onMessage = (data) => {
        const text = data.toString();
        if (text === '{"type":"auth_result","success":true}') return resolve();
        frames.push(text);
        const { request_id } = JSON.parse(text) as { request_id: string };
        own.send(`{"type":"decline","request_id":"${request_id}"}`);
      };
    });
    // The farm's handshake, unchanged: the bare server says auth_result success before any challenge.
    const none = [{ privateKey: new Uint8Array(32), checksumAddress: '0x' + '0'.repeat(40) }];
    const added = await farm.connect({ wsUrl: `ws://127.0.0.1:${port}`, env: {} }, none, 4);
    assert.deepEqual([added.connected, added.retries], [4, 0]);
    await farm.setPolicy('decline', true);
    for (const seq of [1, 2]) {
      const res = await fetch(`http://127.0.0.1:${port}/rfq`, { method: 'POST', body: '{"wager_micros":1000000}' });
      const body = (await res.json()) as { request_id: string; status: string };
      assert.deepEqual([res.status, body.status], [201, 'timeout']);
      const frame = JSON.parse(frames[seq - 1]!) as Record<string, unknown>;
      assert.ok(Value.Check(RfqMessage, frame), frames[seq - 1]);
      // The seq first, then the type: the service's stamped frame, which the maker worker reads without a parse.
      assert.ok(frames[seq - 1]!.startsWith(`{"seq":${seq},"type":"rfq","request_id":"${body.request_id}",`), frames[seq - 1]);
      const receipt = await farm.receipt(body.request_id);
      assert.equal(receipt?.count, 4);
    }
  } finally {
    await own.close();
    await farm.close();
    child.kill('SIGTERM');
  }
});
