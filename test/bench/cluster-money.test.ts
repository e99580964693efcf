// The cluster's money benchmark (bench/micro/cluster-money.ts) runs end to end with --quick on a real
// nats-server: every phase measured, every RFQ it issued filled (the accounts are funded for all of them),
// every call answered ok, every latency and every process's CPU figure present, and no process it spawned
// left running. No speed is asserted (speed lives in bench/results/); it skips where nats-server is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../helpers/paths.js';
import { natsServerBinary } from '../helpers/nats-server.js';
import type { ClusterMoneyResults } from '../../bench/micro/cluster-money.js';
import { isRunning } from '../../bench/micro/cluster-processes.js';

const binary = natsServerBinary();
const skip = 'missing' in binary ? binary.missing : false;

const PROCESSES = ['caller', 'nodeA', 'nodeB', 'natsServer', 'echo'];
const STEPS: Record<string, string[]> = {
  'nats-echo': ['roundTrip'],
  'money-call': ['call'],
  'rfq-local': ['reserve', 'fill', 'rfq'],
  'rfq-node': ['reserve', 'fill', 'rfq'],
  'rfq-cross': ['reserve', 'fill', 'rfq'],
};

test('the cluster money benchmark measures every phase, fills every RFQ it issues, and leaves no process behind', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-cluster-money-test-'));
  try {
    const out = join(dir, 'cluster-money.json');
    const run = spawnSync(process.execPath, [join(repoRoot, 'dist/bench/micro/cluster-money.js'), '--quick', '--out', out], {
      encoding: 'utf8',
      timeout: 120_000,
      killSignal: 'SIGKILL',
    });
    assert.equal(run.status, 0, `the benchmark failed: ${run.stderr}`);
    const results = JSON.parse(readFileSync(out, 'utf8')) as ClusterMoneyResults;
    assert.equal(results.isQuick, true);
    assert.equal(results.loadAverageAtStart.length, 3);

    const kinds = results.runs.map(({ phase, inFlight }) => `${phase}/${inFlight}`);
    assert.deepEqual(
      [...new Set(kinds)],
      ['nats-echo/1', 'nats-echo/16', 'money-call/1', 'money-call/16', 'rfq-local/16', 'rfq-node/16', 'rfq-cross/16'],
      'every phase ran, in this order',
    );
    assert.ok(
      results.summary.every(({ rounds }) => rounds === 2),
      'each variant ran twice, alternating',
    );
    for (const run of results.runs) {
      const what = `${run.phase}/${run.inFlight}`;
      assert.ok(run.count > 0 && run.perS > 0, `${what}: ${run.count} counted`);
      assert.deepEqual(run.refused, {}, `${what}: funded, nothing refused (every RFQ issued filled)`);
      assert.deepEqual(Object.keys(run.latency).sort(), [...STEPS[run.phase]!].sort(), `${what}: its steps timed`);
      for (const [step, { p50Us, p99Us }] of Object.entries(run.latency)) {
        assert.ok(p50Us > 0 && p99Us >= p50Us, `${what} ${step}: p50 ${p50Us} µs, p99 ${p99Us} µs`);
      }
      assert.deepEqual(Object.keys(run.cpuUsPer).sort(), [...PROCESSES].sort(), `${what}: CPU of every process`);
      for (const name of PROCESSES) assert.ok(Number.isFinite(run.cpuUsPer[name]) && run.cpuUsPer[name]! >= 0, `${what}: ${name}`);
      assert.ok(run.cpuUsPer['caller']! > 0, `${what}: the caller's CPU per unit`);
      const busy = run.phase === 'nats-echo' ? 'echo' : 'nodeA';
      assert.ok(run.cpuPercent[busy]! > 0, `${what}: ${busy}, which answers, used CPU`);
    }
    const cross = results.runs.filter((run) => run.phase === 'rfq-cross');
    assert.ok(
      cross.every((run) => run.cpuPercent['nodeB']! > 0),
      'a fill across nodes works on the maker’s node too',
    );

    assert.deepEqual(Object.keys(results.pids).sort(), ['echo', 'natsServer', 'nodeA', 'nodeB']);
    assert.deepEqual(results.leftBehind, []);
    for (const [name, pid] of Object.entries(results.pids)) assert.equal(isRunning(pid), false, `${name} (${pid}) is gone`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
