// The fuzzer (scripts/fuzz.ts, issue 21) on a fixed seed and a small count, so every `npm test` replays the
// same few hundred mutated requests and maker messages against the real service. Longer runs: `npm run
// fuzz -- --seed N --count N` (docs/reliability.md lists the counts run).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fuzzService } from '../../scripts/fuzz.js';

describe('fuzzing every route and the maker socket (issue 21)', () => {
  it('seed 20261125, 400 requests: no 5xx, the contract error body on every 4xx, no money moved, healthy, ledger agrees', async () => {
    const report = await fuzzService(20261125, 400, 60_000);
    assert.deepEqual(report.failures, []);
    assert.ok(report.requests >= 390, `${report.requests} requests answered`);
    assert.ok(report.makerMessages > 0);
  });
});
