// Scenario `ceiling`: the denominators of the HTTP ratios. An empty uWebSockets.js handler and an empty
// node:http handler, each in its own child process, each returning a body the size of an RFQ result, driven
// by the same client, the same way (closed loop, 64 keep-alive connections, the raw client of raw-http.ts),
// in the same run as `get`.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import { toRfqResult, type RfqRecord } from '../../../src/records/rfqs.js';
import { runClosedLoop, type ClosedLoopResult } from '../closed-loop.js';
import { DEFAULT_CONNECTIONS } from '../http-client.js';
import { RawHttpPool, encodeGet } from '../raw-http.js';
import { repoRoot } from '../server.js';
import { stepMs, type RunContext, type Scenario } from './context.js';

export interface CeilingResult {
  bodyBytes: number;
  uws: ClosedLoopResult;
  http: ClosedLoopResult;
}

/** The body GET /v1/rfq/{id} returns for a completed RFQ of the benchmark's shape. */
export function rfqResultBodyBytes(): number {
  const record: RfqRecord = {
    requestId: '00c0ffee-0000-4000-8000-000000000000',
    userId: 'u',
    wallet: '0x' + '0'.repeat(40),
    kind: 'unsigned',
    legs: [],
    wagerMicros: '1000000',
    minOddsE4: 15_000,
    toleranceBps: 50,
    orderType: 2,
    isShielded: false,
    createdAtMs: 0,
    expiresAtMs: 0,
    status: 'completed',
    quotesReceived: 10,
    fill: { makerAddress: '0x', quoteId: 'q1', oddsE4: 25_000, filledWagerMicros: '1000000', payoutMicros: '2500000' },
    error: null,
    terminalAtMs: 0,
  };
  return Buffer.byteLength(JSON.stringify(toRfqResult(record)));
}

/** The GET the `get` scenario sends, against the ceiling servers too: same path length, same headers. */
export const CEILING_PATH = '/v1/rfq/00c0ffee-0000-4000-8000-000000000000';
export const CEILING_HEADERS = { authorization: `Bearer ${'x'.repeat(43)}` };

/** A child server of bench/load (`script` in dist/bench/load/), up once it prints {"port": N}. */
export interface ListeningChild {
  child: ChildProcess;
  port: number;
}

export async function spawnListening(script: string, args: string[]): Promise<ListeningChild> {
  const child = spawn(process.execPath, [resolve(repoRoot, 'dist/bench/load', script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const port = await new Promise<number>((done, fail) => {
      createInterface({ input: child.stdout! }).once('line', (line) => done((JSON.parse(line) as { port: number }).port));
      child.once('exit', (code) => fail(new Error(`${script} ${args.join(' ')} exited with ${code}`)));
    });
    return { child, port };
  } catch (err) {
    child.kill('SIGTERM');
    throw err;
  }
}

async function measure(ctx: RunContext, mode: 'uws' | 'http', bodyBytes: number): Promise<ClosedLoopResult> {
  const { child, port } = await spawnListening('ceiling-server.js', [mode, String(bodyBytes)]);
  try {
    const pool = await RawHttpPool.open(port, DEFAULT_CONNECTIONS);
    const request = encodeGet(port, CEILING_PATH, CEILING_HEADERS);
    try {
      return await runClosedLoop({
        concurrency: DEFAULT_CONNECTIONS,
        durationMs: stepMs(ctx, 5000),
        warmupMs: stepMs(ctx, 1000, 300),
        request: async () => (await pool.request(request)).status === 200,
        serverPid: child.pid!,
      });
    } finally {
      pool.close();
    }
  } finally {
    child.kill('SIGTERM');
  }
}

export const ceiling: Scenario<CeilingResult> = {
  name: 'ceiling',
  describe: 'empty uWS and node:http handlers returning an RFQ-result-sized body (the HTTP denominators)',
  async run(ctx) {
    const bodyBytes = rfqResultBodyBytes();
    const uws = await measure(ctx, 'uws', bodyBytes);
    ctx.log(`uws ceiling: ${uws.reqPerS} req/s (p99 ${uws.latency.p99Ms} ms)`);
    const http = await measure(ctx, 'http', bodyBytes);
    ctx.log(`node:http ceiling: ${http.reqPerS} req/s (p99 ${http.latency.p99Ms} ms)`);
    return { bodyBytes, uws, http };
  },
};
