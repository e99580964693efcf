// The `get-wrk` scenario's use of wrk (bench/load/scenarios/get-wrk.ts), against a real HTTP server on
// loopback: its Lua script walks every path with that path's Authorization header, and its output is read
// into req/s and latencies. No timing is asserted. Skipped where wrk is not installed (apt-get install wrk).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasWrk, luaScript, wrkRun } from '../../bench/load/scenarios/get-wrk.js';

const wrk = await hasWrk();

test(
  'wrk walks every path with its own Authorization header, and its figures are read',
  { skip: wrk === null ? 'wrk is not installed' : false },
  async () => {
    const seen = new Map<string, Set<string>>();
    let answered = 0;
    const server = createServer((req, res) => {
      const headers = seen.get(req.url!) ?? new Set<string>();
      headers.add(req.headers.authorization ?? '');
      seen.set(req.url!, headers);
      answered++;
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const dir = mkdtempSync(join(tmpdir(), 'parlayd-wrk-test-'));
    try {
      const script = join(dir, 'get.lua');
      writeFileSync(
        script,
        luaScript([
          { path: '/v1/rfq/a', headers: { authorization: 'Bearer token-a' } },
          { path: '/v1/rfq/b', headers: { authorization: 'Bearer token-"b"' } },
        ]),
      );
      const run = await wrkRun('service', (server.address() as AddressInfo).port, process.pid, script, 1);
      assert.deepEqual([...seen].map(([path, headers]) => [path, [...headers]]).sort(), [
        ['/v1/rfq/a', ['Bearer token-a']],
        ['/v1/rfq/b', ['Bearer token-"b"']],
      ]);
      assert.ok(run.reqPerS > 0 && run.reqPerS <= answered, `${run.reqPerS} req/s of ${answered} answered`);
      assert.ok(run.p50Ms > 0 && run.p99Ms >= run.p50Ms, `p50 ${run.p50Ms} p99 ${run.p99Ms}`);
      assert.ok(run.serverUsPerReq > 0);
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
