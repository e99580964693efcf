// CPU per thread by role (src/ops/thread-cpu.ts): every worker thread of the service announces itself, so
// /metrics names the main thread, each shard and the verify pool, and whatever is left counts as `other`.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { Registry } from 'prom-client';
import { ThreadRoles } from '../../src/ops/thread-cpu.js';
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

describe('thread roles', { skip: hasProc ? false : 'needs /proc (Linux)' }, () => {
  it('a thread that ended is forgotten at the next scrape, so its id cannot pass its role to a new thread', async () => {
    const registry = new Registry();
    const roles = new ThreadRoles(registry);
    const rolesShown = async () =>
      [...(await registry.metrics()).matchAll(/^parlayd_thread_cpu_seconds\{thread="([^"]+)"\}/gm)].map((m) => m[1]!).sort();
    try {
      const worker = new Worker(new URL('./fixtures/announce-and-wait.js', import.meta.url));
      await once(worker, 'message');
      await waitFor(async () => (await rolesShown()).includes('check'), { what: 'the worker shown as check' });
      assert.equal(roles.knownThreads, 2, 'the main thread and the worker');
      await worker.terminate();
      assert.ok(!(await rolesShown()).includes('check'), 'an ended thread leaves the sum');
      assert.equal(roles.knownThreads, 1, 'and its role is forgotten');
    } finally {
      roles.close();
    }
  });
});
