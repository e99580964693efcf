// Scenarios `unsigned` and `signed`: RFQ admission at increasing open-loop rates until saturation, with 10
// makers that quote at once. Every request is POST ...?wait_ms=2000, so its answer is the terminal result
// and the HDR histogram holds create -> completed latency measured from the request's due time. An answer
// that is not 201 `completed` is an error. The ladder stops after the first saturated step. Before the
// makers connect, admission alone is measured (closed loop): the `signed` target's numerator; for `signed`,
// the same measurement against recovery-bound-server.ts then gives the most any signed admission can reach here.
import { availableParallelism } from 'node:os';
import { fundedUsers, openMarkets, registerMakers } from '../fixtures.js';
import { childCpuMs, startCpuMeter, type CpuShare } from '../cpu.js';
import { RawHttpPool } from '../raw-http.js';
import type { BenchServer } from '../server.js';
import { MakerFarm } from '../makers.js';
import { runOpenLoop, type OpenLoopResult } from '../open-loop.js';
import { runClosedLoop, type ClosedLoopResult } from '../closed-loop.js';
import { CREDIT_MICROS, NonceSource, encodeRfqs, isTerminalWith, postRfqRaw, prepareSigned, prepareUnsigned } from '../rfq-traffic.js';
import { sleep, startServerFor, stepMs, type RunContext, type Scenario } from './context.js';
import type { GroupCommitCounts } from '../../../src/store/group-commit.js';
import type { MicroResult } from './micro.js';
import { rfqResultBodyBytes, spawnListening } from './ceiling.js';

export const LADDER_MAKERS = 10;
const USERS = 16;
const MARKETS = 12;
const WAIT_MS = 2000;
/** A step is saturated when it errs, could not send, or its p99 passed this (the service is queueing). */
const SATURATION_P99_MS = 500;
const ADMISSION_CALLERS = 128;

export interface LadderStep extends OpenLoopResult {
  isSaturatedStep: boolean;
  /** Server and client CPU over the step, % of one core. */
  cpu: CpuShare;
  /**
   * Mean of each server stage histogram over the step, ms, by metric (`parlayd_rfq_persist_seconds`...):
   * /metrics read before and after it. Absent from results written before they were kept.
   */
  stages?: Record<string, number>;
  /** The shards' group commits over the step and the transactions in them; absent from older results. */
  commits?: GroupCommitCounts;
  /**
   * CPU of the server's threads over the step by role (main, shard-<n>, verify, other), % of one core, from
   * its parlayd_thread_cpu_seconds; absent for a build that does not report it (cpu has its main thread).
   */
  threads?: Record<string, number>;
  /**
   * CPU of the other processes the service runs on (a cluster's shard nodes and nats-server: LadderServer
   * `processes`) over the step, ms, by name; absent when there are none.
   */
  processCpuMs?: Record<string, number>;
}

export interface LadderResult {
  kind: 'unsigned' | 'signed';
  /** Admission alone: no maker connected (each RFQ ends `timeout` at once), wait_ms=0, closed loop. */
  admission: ClosedLoopResult;
  /** signed only: admission.reqPerS / recoveries per second of all cores (bench:micro, this run). */
  admissionOfRecoveryCeiling: number | null;
  /**
   * signed only: the same requests, same client, against recovery-bound-server.ts (HTTP + the order's
   * recovery on every core, nothing else): the most any signed admission could reach here.
   */
  recoveryBound: ClosedLoopResult | null;
  /** signed only: recoveryBound.reqPerS / recoveries per second of all cores: the target's reachable share. */
  recoveryBoundOfRecoveryCeiling: number | null;
  /** signed only: admission.reqPerS / recoveryBound.reqPerS: how close the service is to that bound. */
  admissionOfRecoveryBound: number | null;
  makers: number;
  shards: number;
  steps: LadderStep[];
  /** Highest completed RFQ/s of a step that was not saturated. */
  sustainedPerS: number;
  /** Highest completed RFQ/s of any step. */
  peakPerS: number;
  /** signed only: sustainedPerS / recoveries per second of all cores (bench:micro, this run). */
  ofRecoveryCeiling: number | null;
  recoveriesPerSAllCores: number | null;
}

/** CPU so far of each named process, ms (none: empty). */
function processCpuMs(processes: Readonly<Record<string, number>> | undefined): Record<string, number> {
  return Object.fromEntries(Object.entries(processes ?? {}).map(([name, pid]) => [name, childCpuMs(pid)]));
}

function isSaturatedStep(step: OpenLoopResult): boolean {
  return step.errors > 0 || step.isSaturated || step.latency.p99Ms > SATURATION_P99_MS || step.throughputPerS < step.offeredPerS * 0.9;
}

/** Which service a ladder runs against: another build's entry point, more service variables (scenario `ab`). */
export interface LadderServer {
  script?: string;
  env?: Record<string, string>;
  /** Further processes of the service whose CPU each step reports (a cluster's), by name: their pids. */
  processes?: Readonly<Record<string, number>>;
  /**
   * More front doors of the same service (a cluster's other gateways): the steps' RFQs are sent to the
   * started server and these in turn, and the makers are spread over them all.
   */
  fronts?: readonly BenchServer[];
}

export async function runLadder(
  ctx: RunContext,
  kind: 'unsigned' | 'signed',
  rates: number[],
  side: LadderServer = {},
): Promise<LadderResult> {
  const server = await startServerFor(ctx, side.env, side.script);
  const pool = await RawHttpPool.open(server.port, 256);
  const fronts = side.fronts ?? [];
  const frontPools = await Promise.all(fronts.map((front) => RawHttpPool.open(front.port, 256)));
  const pools = [pool, ...frontPools];
  const farm = new MakerFarm();
  try {
    const users = await fundedUsers(server, USERS, CREDIT_MICROS);
    const markets = await openMarkets(server, MARKETS);
    const nonces = new NonceSource();
    const prepare = (count: number, waitMs = WAIT_MS): Buffer[] =>
      encodeRfqs(
        server.port,
        kind === 'unsigned'
          ? prepareUnsigned(users, markets, count, waitMs)
          : prepareSigned(users, markets, count, waitMs, nonces, Date.now() + 15 * 60_000),
      );
    const admission = await measureAdmission(ctx, pool, server.pid, prepare(ctx.isQuick ? 4_000 : 40_000, 0));
    ctx.log(
      `${kind} admission (no makers, closed loop): ${admission.reqPerS} RFQ/s admitted (p99 ${admission.latency.p99Ms} ms), server CPU ${admission.cpu?.serverPercent} %`,
    );
    const recoveryBound = kind === 'signed' ? await measureRecoveryBound(ctx, prepare) : null;
    if (recoveryBound !== null) {
      ctx.log(
        `signed recovery bound (HTTP + recovery only, every core): ${recoveryBound.reqPerS} req/s, server CPU ${recoveryBound.cpu?.serverPercent} %`,
      );
    }
    // No steps (admission alone, as scenario storage-bound asks for signed): no makers, no warm-up for them.
    if (rates.length > 0) {
      const makers = await registerMakers(server, LADDER_MAKERS);
      // Each front door its share of the connections (the first any remainder).
      for (const [i, front] of [server, ...fronts].entries()) {
        const share = Math.floor(LADDER_MAKERS / pools.length) + (i < LADDER_MAKERS % pools.length ? 1 : 0);
        await farm.connect(front, makers, share);
      }
      await farm.setPolicy('quote');
      // Warm-up, unmeasured: JIT on both sides, connections, LMDB pages, the verify pool.
      await step(pools, prepare(ctx.isQuick ? 200 : 1500), 500);
    }
    const steps: LadderStep[] = [];
    const stageSnapshot = new Map<string, number>();
    await stageMeans(server, stageSnapshot);
    for (const ratePerS of rates) {
      const durationMs = stepMs(ctx, 5000);
      const prepared = prepare(Math.round((ratePerS * durationMs) / 1000));
      await sleep(500);
      const threadsBefore = await threadCpuSeconds(server);
      const threadsFrom = performance.now();
      const meter = startCpuMeter(server.pid);
      const processesBefore = processCpuMs(side.processes);
      const result = await step(pools, prepared, ratePerS);
      const cpu = meter();
      const processesAfter = processCpuMs(side.processes);
      const threads = threadPercents(threadsBefore, await threadCpuSeconds(server), performance.now() - threadsFrom);
      const saturated = isSaturatedStep(result);
      const stages = await stageMeans(server, stageSnapshot);
      steps.push({
        ...result,
        isSaturatedStep: saturated,
        cpu,
        stages: Object.fromEntries([...stages.stages].map(([name, s]) => [name, s.meanMs])),
        commits: stages.commits,
        ...(threads === null ? {} : { threads }),
        ...(side.processes === undefined
          ? {}
          : {
              processCpuMs: Object.fromEntries(
                Object.keys(side.processes).map((name) => [name, processesAfter[name]! - processesBefore[name]!]),
              ),
            }),
      });
      ctx.log(
        `${kind} @${ratePerS}/s: ${result.throughputPerS}/s done, p50 ${result.latency.p50Ms} p99 ${result.latency.p99Ms} ` +
          `p99.9 ${result.latency.p999Ms} max ${result.latency.maxMs} ms, errors ${result.errors}, CPU server ${cpu.serverPercent} % ` +
          `client ${cpu.clientPercent} %, server threads ${formatThreads(cpu, threads)}${saturated ? ' (saturated)' : ''}`,
      );
      if (process.env['BENCH_STAGES'] === '1') ctx.log(formatStages(stages));
      if (saturated) break;
    }
    const sustainedPerS = Math.max(0, ...steps.filter((s) => !s.isSaturatedStep).map((s) => s.throughputPerS));
    const peakPerS = Math.max(0, ...steps.map((s) => s.throughputPerS));
    const microResult = ctx.results.get('micro') as MicroResult | undefined;
    const recoveries = kind === 'signed' ? (microResult?.recoveriesPerSAllCores ?? null) : null;
    return {
      kind,
      admission,
      admissionOfRecoveryCeiling: ratio(admission.reqPerS, recoveries),
      recoveryBound,
      recoveryBoundOfRecoveryCeiling: ratio(recoveryBound?.reqPerS ?? null, recoveries),
      admissionOfRecoveryBound: ratio(admission.reqPerS, recoveryBound?.reqPerS ?? null),
      makers: LADDER_MAKERS,
      shards: Number(server.env['PARLAYD_SHARDS'] ?? Math.max(1, availableParallelism() - 1)),
      steps,
      sustainedPerS,
      peakPerS,
      ofRecoveryCeiling: ratio(sustainedPerS, recoveries),
      recoveriesPerSAllCores: recoveries,
    };
  } finally {
    await farm.close().catch(() => undefined);
    for (const open of pools) open.close();
    await server.stop();
  }
}

/**
 * Admission throughput: RFQs answered 201 per second by 128 callers for a few seconds, before any maker
 * connects, so nothing but admission and the two durable writes (created, then `timeout` at once) runs.
 * Each body is sent once (a repeat would be an idempotent replay), unless `isRepeatable`.
 */
async function measureAdmission(
  ctx: RunContext,
  pool: RawHttpPool,
  serverPid: number,
  bodies: readonly Buffer[],
  isRepeatable = false,
): Promise<ClosedLoopResult> {
  return runClosedLoop({
    concurrency: ADMISSION_CALLERS,
    durationMs: stepMs(ctx, 4000),
    warmupMs: stepMs(ctx, 1000, 300),
    request: async (i) => (await postRfqRaw(pool, bodies[i % bodies.length]!)).status === 201,
    ...(isRepeatable ? {} : { stopWhen: (next: number) => next >= bodies.length }),
    serverPid,
  });
}

/**
 * The signed admission bound: the admission measurement's shape (closed loop, same callers, same time, fresh
 * signed bodies of the same shape) against recovery-bound-server.ts instead of the service.
 */
async function measureRecoveryBound(ctx: RunContext, prepare: (count: number, waitMs?: number) => Buffer[]): Promise<ClosedLoopResult> {
  const { child, port } = await spawnListening('recovery-bound-server.js', [String(rfqResultBodyBytes())]);
  try {
    const pool = await RawHttpPool.open(port, ADMISSION_CALLERS);
    try {
      // It keeps no replay keys, so a few thousand distinct bodies sent in turn measure it fully.
      return await measureAdmission(ctx, pool, child.pid!, prepare(4_000, 0), true);
    } finally {
      pool.close();
    }
  } finally {
    child.kill('SIGTERM');
  }
}

const ratio = (numerator: number | null, denominator: number | null): number | null =>
  numerator === null || denominator === null || denominator === 0 ? null : Math.round((numerator / denominator) * 1000) / 1000;

/** The RFQs at `ratePerS`, each to the next of `pools` in turn (one front door: every one to it). */
function step(pools: readonly RawHttpPool[], prepared: Buffer[], ratePerS: number): Promise<OpenLoopResult> {
  return runOpenLoop({
    ratePerS,
    durationMs: (prepared.length / ratePerS) * 1000,
    maxInFlight: 20_000,
    request: async (i) => isTerminalWith(await postRfqRaw(pools[i % pools.length]!, prepared[i]!), 'completed'),
  });
}

/** BENCH_RATES=2000,3000 runs only those steps (to profile one rate); otherwise the scenario's ladder. */
export function ratesFor(ctx: RunContext, quick: number[], full: number[]): number[] {
  const fromEnv = process.env['BENCH_RATES'];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv.split(',').map(Number);
  return ctx.isQuick ? quick : full;
}

/** The `unsigned` ladder's offered rates (scenario `storage-bound` runs the same). */
export const unsignedRates = (ctx: RunContext) => ratesFor(ctx, [500, 2000], [250, 500, 1000, 2000, 3000, 4000, 6000, 8000]);

export const unsigned: Scenario<LadderResult> = {
  name: 'unsigned',
  describe: 'unsigned RFQs at increasing open-loop rates with 10 quoting makers: create -> completed latency',
  run: (ctx) => runLadder(ctx, 'unsigned', unsignedRates(ctx)),
};

export const signed: Scenario<LadderResult> = {
  name: 'signed',
  describe: 'signed RFQs at increasing open-loop rates with 10 quoting makers; throughput against recoveries/s',
  run: (ctx) => runLadder(ctx, 'signed', ratesFor(ctx, [500, 2000], [500, 1000, 2000, 3000, 4000, 6000, 8000, 12_000, 16_000, 20_000])),
};

/** What /metrics says of an interval: the stage histograms' means and the shards' commits. */
export interface StageMeans {
  /** Each stage histogram's count and mean over the interval, by metric (with its labels). */
  stages: Map<string, { count: number; meanMs: number }>;
  /**
   * The shards' group commits over the interval and the transactions they held (shards report every second,
   * so a 5-second step's counts are within a report of the step's own).
   */
  commits: GroupCommitCounts;
}

/** StageMeans since the last call with the same `last` (the values read then, kept in it by key). */
export async function stageMeans(server: { baseUrl: string; adminToken: string }, last: Map<string, number>): Promise<StageMeans> {
  const text = await (await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${server.adminToken}` } })).text();
  const since = (key: string, value: number) => {
    const delta = value - (last.get(key) ?? 0);
    last.set(key, value);
    return delta;
  };
  const sums = new Map<string, number>();
  for (const m of text.matchAll(/^(parlayd_[a-z_]+_seconds)_(sum|count)(\{[^}]*\})? ([0-9.e+-]+)$/gm)) {
    const key = `${m[1]}${m[3] ?? ''}|${m[2]}`;
    sums.set(key, since(key, Number(m[4])));
  }
  const stages = new Map<string, { count: number; meanMs: number }>();
  for (const [key, sum] of sums) {
    if (!key.endsWith('|sum')) continue;
    const name = key.slice(0, -4);
    const count = sums.get(`${name}|count`) ?? 0;
    if (count > 0) stages.set(name, { count, meanMs: Math.round((sum / count) * 1e6) / 1000 });
  }
  const counter = (name: string) => since(name, Number(new RegExp(`^${name} ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? 0));
  const commits = {
    commits: counter('parlayd_rfq_shard_commits_total'),
    transactions: counter('parlayd_rfq_shard_commit_transactions_total'),
  };
  return { stages, commits };
}

/** The server's CPU seconds by thread role (ops/thread-cpu.ts), or an empty map from a build without them. */
async function threadCpuSeconds(server: { baseUrl: string; adminToken: string }): Promise<Map<string, number>> {
  const text = await (await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${server.adminToken}` } })).text();
  const seconds = new Map<string, number>();
  for (const m of text.matchAll(/^parlayd_thread_cpu_seconds\{thread="([^"]+)"\} ([0-9.e+-]+)$/gm)) seconds.set(m[1]!, Number(m[2]));
  return seconds;
}

/** Percent of one core each role used between two readings `wallMs` apart; null when the build reports none. */
export function threadPercents(before: Map<string, number>, after: Map<string, number>, wallMs: number): Record<string, number> | null {
  if (after.size === 0) return null;
  const percents: Record<string, number> = {};
  for (const [role, seconds] of after) percents[role] = Math.round(((seconds - (before.get(role) ?? 0)) * 1000 * 100) / wallMs);
  return percents;
}

/** `main 45 %, shard-0 60 %, ...`, or the main thread alone for a build that reports no roles. */
export function formatThreads(cpu: CpuShare, threads: Record<string, number> | null): string {
  if (threads === null) return `main ${cpu.serverMainThreadPercent ?? '?'} %`;
  return Object.entries(threads)
    .sort(([a], [b]) => (a === 'main' ? -1 : b === 'main' ? 1 : a.localeCompare(b)))
    .map(([role, percent]) => `${role} ${percent} %`)
    .join(', ');
}

/** The BENCH_STAGES=1 lines: one per stage histogram, then the shards' commits. */
export function formatStages({ stages, commits }: StageMeans): string {
  const perCommit = commits.commits === 0 ? '-' : (commits.transactions / commits.commits).toFixed(2);
  return [
    ...[...stages].map(([name, s]) => `${name} n=${s.count} mean=${s.meanMs.toFixed(3)}ms`),
    `shard group commits n=${commits.commits}, transactions per commit ${perCommit}`,
  ].join('\n');
}
