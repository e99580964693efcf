// Three rounds of the chaos run (scripts/chaos.ts, issue 21) on one data directory, fixed seed: a SIGKILL
// at a seeded moment of a mixed load (RFQs a maker fills, credits, contest entries, a resolution), then a
// restart that finds every acknowledged write and a stopped data dir whose ledger agrees with itself.
// Longer runs: `npm run chaos -- --rounds N --seed N` (docs/reliability.md lists the counts run).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runChaos } from '../../scripts/chaos.js';

describe('kill -9 at random points of a mixed load (issue 21)', () => {
  it('seed 20261125, 3 rounds: every acknowledged write survives, and the ledger agrees after each', async () => {
    const report = await runChaos(3, 20261125);
    assert.equal(report.rounds, 3);
    const acked = report.ackedRfqs + report.ackedCredits + report.ackedEntries + report.ackedWithdrawals + report.ackedDecisions;
    assert.ok(acked > 0, 'something was acknowledged before a kill');
  });
});
