// Three rounds of the cluster's chaos run (scripts/chaos-cluster.ts), fixed seed: two owner nodes on a real
// nats-server, a seeded mixed load of credits, fills across nodes, settlements and withdrawals, and in each
// round a SIGKILL of node a (two owners), node b or nats-server (each once); after each restart every acknowledged write
// is found and the cluster's ledger check is clean, and at the end both journals check together to the micro.
// Longer runs: `npm run chaos -- --cluster --rounds N --seed N` (docs/scaling.md lists the counts run).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runClusterChaos } from '../../scripts/chaos-cluster.js';
import { natsServerBinary } from '../helpers/nats-server.js';

const binary = natsServerBinary();

test(
  'seed 20261203, 3 rounds: each kind of victim killed once, every acknowledged write found, the checks clean',
  { skip: 'missing' in binary ? binary.missing : false },
  async () => {
    const report = await runClusterChaos(3, 20261203);
    assert.deepEqual([...report.victims].sort(), ['nats-server', 'node a', 'node b']);
    assert.ok(report.ackedFills > 0 && report.ackedCredits > 0, `acknowledged before the kills: ${JSON.stringify(report)}`);
  },
);
