// Scenario `storage-bound` calls a figure unreachable by any storage change when the service with LMDB never
// flushed misses it too, so that service (bench/load/no-flush-main.ts) must be the service, must write its
// pages, and must not flush them. Counted with strace: the flushes (fdatasync/fsync) each service
// makes while it starts and books three credits (each a durable commit of the user's shard). No timing is
// asserted (speed lives in bench/).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { NO_FLUSH_MAIN } from '../../bench/load/scenarios/storage-bound.js';
import { mainScript } from '../helpers/paths.js';
import { assertLedgerAgrees, testServiceEnv } from '../helpers/server.js';

/** strace installed and allowed to trace here (a container without ptrace would refuse). */
const canTrace = spawnSync('strace', ['-f', '-qq', '-e', 'trace=none', 'true']).status === 0;

interface Traced {
  /** Syscall names traced, by how many times each was called. */
  calls: Map<string, number>;
  creditStatuses: number[];
  balances: string[];
}

/** Runs `script` under strace, books three credits, stops it (SIGTERM), and counts its flushes and writes. */
async function creditTraced(script: string): Promise<Traced> {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-bound-'));
  const traceFile = join(dir, 'trace');
  const env = testServiceEnv(join(dir, 'data'));
  const child = spawn('strace', ['-f', '-qq', '-e', 'trace=fdatasync,fsync,pwrite64', '-o', traceFile, process.execPath, script], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const creditStatuses: number[] = [];
  const balances: string[] = [];
  let servicePid: number | undefined;
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the service did not start under strace')), 30_000);
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (!line.includes('"listening"')) return;
        clearTimeout(timer);
        resolve((JSON.parse(line) as { port: number }).port);
      });
    });
    // The service is strace's one child; stopped by itself (SIGTERM), strace exits with it.
    servicePid = Number(spawnSync('pgrep', ['-P', String(child.pid)], { encoding: 'utf8' }).stdout.trim());
    assert.ok(servicePid > 0, 'the service under strace has a pid');
    for (let i = 0; i < 3; i++) {
      const answer = await fetch(`http://127.0.0.1:${port}/v1/admin/users/credit`, {
        method: 'POST',
        headers: { authorization: `Bearer ${env['PARLAYD_ADMIN_TOKEN']!}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          wallet: `0x${randomBytes(20).toString('hex')}`,
          amount_micros: 5_000_000 + i,
          idempotency_key: `bound-${i}`,
        }),
      });
      creditStatuses.push(answer.status);
      balances.push(((await answer.json()) as { balance: { available_micros: string } }).balance.available_micros);
    }
    process.kill(servicePid, 'SIGTERM');
    await exited;
    await assertLedgerAgrees(join(dir, 'data')); // the money the credits moved, as after every end-to-end test
  } finally {
    // On a failure: strace killed alone would leave the service running, detached.
    if (child.exitCode === null) {
      if (servicePid !== undefined && servicePid > 0) process.kill(servicePid, 'SIGKILL');
      child.kill('SIGKILL');
    }
  }
  const calls = new Map<string, number>();
  for (const line of readFileSync(traceFile, 'utf8').split('\n')) {
    const name = /^\d+\s+(\w+)\(/.exec(line)?.[1];
    if (name !== undefined) calls.set(name, (calls.get(name) ?? 0) + 1);
  }
  rmSync(dir, { recursive: true, force: true });
  return { calls, creditStatuses, balances };
}

test(
  'the storage bound runs the service and writes its pages, without one LMDB flush',
  { skip: !canTrace && 'strace cannot trace here' },
  async () => {
    const shipped = await creditTraced(mainScript);
    const bound = await creditTraced(NO_FLUSH_MAIN);
    for (const run of [shipped, bound]) {
      assert.deepEqual(run.creditStatuses, [200, 200, 200]);
      assert.deepEqual(run.balances, ['5000000', '5000001', '5000002']);
    }
    // The control: the service flushes every commit (so this count can tell a flush from none).
    assert.ok((shipped.calls.get('fdatasync') ?? 0) >= 3, `the service flushed ${shipped.calls.get('fdatasync') ?? 0} times`);
    assert.equal(bound.calls.get('fdatasync') ?? 0, 0, 'the storage bound flushed LMDB');
    // It still writes its pages (to the page cache): only the flushes are gone.
    assert.ok((bound.calls.get('pwrite64') ?? 0) > 0);
  },
);
