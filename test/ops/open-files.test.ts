// The open-files limit the service runs with (issue 33 item 8: with its descriptors exhausted, uSockets'
// accept loop spins; docs/reliability.md, "Connections"). Node raises the soft RLIMIT_NOFILE to the hard one
// as it starts, so a service started with a low soft limit runs with the hard one, and its 'listening' line
// says which.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { parseOpenFilesLimit } from '../../src/ops/open-files.js';
import { mainScript } from '../helpers/paths.js';
import { testServiceEnv } from '../helpers/server.js';

const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max processes             63471                63471                processes
Max open files            1024                 1048576              files
Max locked memory         8388608              8388608              bytes
`;

describe('parseOpenFilesLimit', () => {
  it('reads the soft and hard "Max open files" of /proc/<pid>/limits', () => {
    assert.deepEqual(parseOpenFilesLimit(LIMITS), { soft: 1024, hard: 1_048_576 });
    assert.deepEqual(parseOpenFilesLimit(LIMITS.replace('1048576  ', 'unlimited')), { soft: 1024, hard: 'unlimited' });
    assert.equal(parseOpenFilesLimit('Limit Soft Limit Hard Limit Units\n'), null);
  });
});

describe('the service started with a soft open-files limit below its hard one', () => {
  it('runs with the hard limit, and its listening line says so', async () => {
    const hard = parseOpenFilesLimit(readFileSync('/proc/self/limits', 'utf8'))!.hard;
    assert.equal(typeof hard, 'number', 'this test needs a finite hard limit');
    const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-nofile-'));
    // sh lowers the soft limit only, then becomes the service (exec): the service's pid is the child's.
    const child = spawn('sh', ['-c', 'ulimit -S -n 256 && exec "$0" "$@"', process.execPath, mainScript], {
      env: { PATH: process.env['PATH'] ?? '', ...testServiceEnv(dataDir) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    try {
      const listening = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('the service did not start')), 15_000);
        createInterface({ input: child.stdout }).on('line', (line) => {
          const entry = JSON.parse(line) as Record<string, unknown>;
          if (entry['msg'] !== 'listening') return;
          clearTimeout(timer);
          resolve(entry);
        });
      });
      assert.deepEqual(listening['openFilesLimit'], { soft: hard, hard });
      assert.deepEqual(parseOpenFilesLimit(readFileSync(`/proc/${child.pid}/limits`, 'utf8')), { soft: hard, hard });
    } finally {
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
