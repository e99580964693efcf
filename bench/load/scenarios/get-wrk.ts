// Scenario `get-wrk` (issue 35's GET target: GET /v1/rfq/{id} ≥ 80 % of an empty uWS handler, wrk, alternated).
// The service holding 2,048 completed RFQs, and the empty uWebSockets.js handler of `ceiling` returning a
// body of the same size, are each driven by wrk (its own process: one thread, 64 connections, the same
// paths and Authorization headers from one Lua script), alternated: handler, service, handler, service, …
// (BENCH_WRK_ROUNDS, 3), so a drift of this machine weighs on both alike. Per run: req/s, p50 and p99 as wrk
// reports them, and the server's CPU µs per request from /proc. The ratio is of the medians. Opt-in (it
// needs wrk: `apt-get install wrk`); without wrk it says so and measures nothing.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { childCpuMs } from '../cpu.js';
import { rfqResultBodyBytes, spawnListening } from './ceiling.js';
import type { RunContext, Scenario } from './context.js';
import { serviceWithCompletedRfqs } from './get.js';

const run = promisify(execFile);
const CONNECTIONS = 64;
const STORED_RFQS = 2048;
export const WRK_TARGET_OF_UWS = 0.8;

export interface WrkRun {
  side: 'uws' | 'service';
  reqPerS: number;
  p50Ms: number;
  p99Ms: number;
  /** The server process's CPU (all its threads) per request over the run. */
  serverUsPerReq: number;
}

export interface GetWrkResult {
  /** Null when wrk is not installed: nothing was measured. */
  wrk: string | null;
  connections: number;
  seconds: number;
  runs: WrkRun[];
  uwsReqPerS: number | null;
  serviceReqPerS: number | null;
  /** service / uws, medians of each side's runs. */
  ofUws: number | null;
}

/** A wrk script that walks `requests` in turn, each formatted once (wrk's Lua: one state per thread). */
export function luaScript(requests: ReadonlyArray<{ path: string; headers: Record<string, string> }>): string {
  const rows = requests.map(({ path, headers }) => `{${JSON.stringify(path)}, ${JSON.stringify(headers['authorization'] ?? '')}}`);
  return [
    `local rows = {${rows.join(',\n')}}`,
    'local formatted = {}',
    'local i = 0',
    'request = function()',
    '  i = i % #rows + 1',
    '  local done = formatted[i]',
    '  if done == nil then',
    '    done = wrk.format("GET", rows[i][1], { ["Authorization"] = rows[i][2] })',
    '    formatted[i] = done',
    '  end',
    '  return done',
    'end',
    '',
  ].join('\n');
}

/** wrk's `--latency` figures in ms: "50%  1.23ms", "99%  4.56ms" (units us, ms or s). */
function latencyMs(output: string, percentile: string): number {
  const match = new RegExp(`^\\s+${percentile}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(output);
  if (match === null) throw new Error(`wrk printed no ${percentile}% latency:\n${output}`);
  const scale = { us: 0.001, ms: 1, s: 1000 }[match[2] as 'us' | 'ms' | 's'];
  return Math.round(Number(match[1]) * scale * 1000) / 1000;
}

export async function wrkRun(side: WrkRun['side'], port: number, pid: number, script: string, seconds: number): Promise<WrkRun> {
  const cpuStart = childCpuMs(pid);
  const args = ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--latency', '-s', script, `http://127.0.0.1:${port}`];
  const { stdout } = await run('wrk', args);
  const cpuMs = childCpuMs(pid) - cpuStart;
  const requests = /(\d+) requests in/.exec(stdout);
  const perS = /Requests\/sec:\s+([\d.]+)/.exec(stdout);
  if (requests === null || perS === null) throw new Error(`wrk output not understood:\n${stdout}`);
  // Anything but 2xx is counted by wrk apart: the service must have answered every GET with its record.
  if (/Non-2xx or 3xx responses/.test(stdout)) throw new Error(`${side}: wrk saw answers other than 200:\n${stdout}`);
  return {
    side,
    reqPerS: Math.round(Number(perS[1])),
    p50Ms: latencyMs(stdout, '50'),
    p99Ms: latencyMs(stdout, '99'),
    serverUsPerReq: Math.round(((cpuMs * 1000) / Number(requests[1])) * 100) / 100,
  };
}

const median = (values: number[]): number | null => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

export async function hasWrk(): Promise<string | null> {
  try {
    const { stdout, stderr } = await run('wrk', ['--version']).catch((error: { stdout?: string; stderr?: string }) => ({
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }));
    const line = `${stdout}${stderr}`.split('\n').find((l) => l.startsWith('wrk'));
    return line ?? null;
  } catch {
    return null;
  }
}

export const getWrk: Scenario<GetWrkResult> = {
  name: 'get-wrk',
  describe: 'opt-in: GET /v1/rfq/{id} against an empty uWS handler, both under wrk, alternated (issue 35: ≥ 80 %)',
  isOptIn: true,
  async run(ctx: RunContext) {
    const seconds = ctx.isQuick ? 1 : 5;
    const wrk = await hasWrk();
    const empty: GetWrkResult = { wrk, connections: CONNECTIONS, seconds, runs: [], uwsReqPerS: null, serviceReqPerS: null, ofUws: null };
    if (wrk === null) {
      ctx.log('get-wrk: wrk is not installed (apt-get install wrk): nothing measured');
      return empty;
    }
    const rounds = Number(process.env['BENCH_WRK_ROUNDS'] ?? (ctx.isQuick ? 1 : 3));
    const dir = mkdtempSync(join(tmpdir(), 'parlayd-get-wrk-'));
    const service = await serviceWithCompletedRfqs(ctx, ctx.isQuick ? 256 : STORED_RFQS);
    const uws = await spawnListening('ceiling-server.js', ['uws', String(rfqResultBodyBytes())]);
    try {
      const script = join(dir, 'get.lua');
      writeFileSync(script, luaScript(service.rfqs));
      // A first short pass of each warms both (JIT, caches); it is not counted.
      await wrkRun('uws', uws.port, uws.child.pid!, script, 1);
      await wrkRun('service', service.server.port, service.server.pid, script, 1);
      const runs: WrkRun[] = [];
      for (let round = 0; round < rounds; round++) {
        for (const side of round % 2 === 0 ? (['uws', 'service'] as const) : (['service', 'uws'] as const)) {
          const result =
            side === 'uws'
              ? await wrkRun(side, uws.port, uws.child.pid!, script, seconds)
              : await wrkRun(side, service.server.port, service.server.pid, script, seconds);
          runs.push(result);
          ctx.log(
            `get-wrk ${side}: ${result.reqPerS} req/s, p50 ${result.p50Ms} p99 ${result.p99Ms} ms, server ${result.serverUsPerReq} µs/req`,
          );
        }
      }
      const uwsReqPerS = median(runs.filter((r) => r.side === 'uws').map((r) => r.reqPerS));
      const serviceReqPerS = median(runs.filter((r) => r.side === 'service').map((r) => r.reqPerS));
      const ofUws = uwsReqPerS === null || serviceReqPerS === null ? null : Math.round((serviceReqPerS / uwsReqPerS) * 1000) / 1000;
      ctx.log(`get-wrk: service ${serviceReqPerS} / empty uWS ${uwsReqPerS} req/s = ${ofUws} (target ≥ ${WRK_TARGET_OF_UWS})`);
      return { ...empty, runs, uwsReqPerS, serviceReqPerS, ofUws };
    } finally {
      uws.child.kill('SIGTERM');
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
