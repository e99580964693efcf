// One owner alone on this thread (src/engine/owner-host.ts), as the engine's tests open it: owner 0 of one,
// every account its own, the clock stopped at 1,000 ms, its answers dropped and a failure failing the test,
// each overridable.
import assert from 'node:assert/strict';
import type { OwnerHostOptions } from '../../src/engine/owner-host.js';

export function soleOwnerOptions(dir: string, overrides: Partial<OwnerHostOptions> = {}): OwnerHostOptions {
  return {
    dir,
    self: 0,
    ownerOf: () => 0,
    limits: { lockTimeoutMs: 1_000, lockQueryMs: 1_000, resendMs: 100, resendPerTick: 16 },
    snapshotEveryRecords: 1e9,
    maxPendingBytes: 1 << 20,
    nowMs: () => 1_000,
    release: () => {},
    onFailure: (error) => assert.fail(error),
    ...overrides,
  };
}
