// CPU per thread by role (src/ops/thread-cpu.ts): every worker thread of the service announces itself, so
// /metrics names the main thread, each shard and the verify pool, and whatever is left counts as `other`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin } from '../helpers/http.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

const hasProc = process.platform === 'linux';

describe('parlayd_thread_cpu_seconds', { skip: hasProc ? false : 'needs /proc (Linux)' }, () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { PARLAYD_SHARDS: '2', PARLAYD_VERIFY_THREADS: '2' } });
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  it('shows the main thread, each shard and the verify pool by role, the rest as other', async () => {
    // The announcements travel on their own channel, beside the workers' start-up messages: wait for them.
    const seconds = await waitFor(
      async () => {
        const text = (await admin(server).get('/metrics')).body as string;
        const read = new Map(
          [...text.matchAll(/^parlayd_thread_cpu_seconds\{thread="([^"]+)"\} (\S+)$/gm)].map((m) => [m[1]!, Number(m[2])]),
        );
        assert.deepEqual([...read.keys()].sort(), ['main', 'other', 'shard-0', 'shard-1', 'verify']);
        return read;
      },
      { what: 'every role in parlayd_thread_cpu_seconds' },
    );
    // Starting the service (parsing, migrations, the listening socket) is work of the main thread.
    assert.ok(seconds.get('main')! > 0, `main ${seconds.get('main')}`);
    for (const value of seconds.values()) assert.ok(Number.isFinite(value) && value >= 0);
  });
});
