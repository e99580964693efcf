// A start that fails stops what it started (boot/areas.ts): the fixture's service fails to listen after its
// shards, verify threads and timers started, and the fixture then waits for nothing. Its process ends by
// itself, with code 0, only if no thread, timer or socket of the failed start is left; a leak keeps it alive
// until the test's deadline kills it.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';

const FIXTURE = fileURLToPath(new URL('./fixtures/failed-start.js', import.meta.url));
/** Far past a stop's own time (well under a second), so only a leak reaches it. */
const DEADLINE_MS = 30_000;

describe('a start that fails at its last area', () => {
  for (const shards of ['1', '2']) {
    it(`with ${shards} shard(s): rejects with the failure and leaves nothing running`, async () => {
      const { stdout } = await promisify(execFile)(process.execPath, [FIXTURE, shards], { timeout: DEADLINE_MS, killSignal: 'SIGKILL' });
      const outcome = JSON.parse(stdout.trim().split('\n').at(-1)!) as { error?: string; dataDir?: string; started?: boolean };
      assert.equal(outcome.started, undefined, 'the service must not listen on an address the machine lacks');
      assert.match(outcome.error ?? '', /cannot listen on 192\.0\.2\.1/);
      rmSync(outcome.dataDir!, { recursive: true, force: true });
    });
  }
});
