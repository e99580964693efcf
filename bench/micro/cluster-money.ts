// `node dist/bench/micro/cluster-money.js [--quick] [--unflushed] [--out <file>]`: what money costs when the
// owners live in processes of their own over core NATS (src/cluster/), on this machine, to budget the
// cluster: calls/s, latency and CPU per call of every process on the path, so a figure can say which process
// or which wait bounds it.
//
// One nats-server, two owner nodes as the cluster's tests run them (test/helpers/owner-nodes.ts: node A holds
// partitions 0-127 as owners 0 and 64 on two threads, node B 128-255 as owner 128; each owner with its own
// journal and LMDB read model in a fresh temp directory; "a user on A" is one of owner 0's), an echo responder (nats-echo.ts), and this process
// as the caller. Measured in turn, each phase a closed loop for a fixed time after an unmeasured warm-up,
// alternated and repeated so each figure comes with its spread:
//   idle           nothing sent: the processes' own CPU (pings, the owners' ticks), to judge the rest against
//   nats-echo      request-reply of a 200-byte payload to the echo process, 1 and 16 in flight: the floor
//   money-call     `reserve` then `release` of a user on A (money-calls.ts), 1 and 16 in flight: a call
//                  answered once its journal record is durable
//   rfq-local      per RFQ a `reserve` and a `fill` of a taker on A against a maker on A, 16 in flight: the
//                  fill decided by one owner alone
//   rfq-node       the same against a maker on A's other owner (owner 64, another thread of node A): the
//                  lock asked and posted by the port between the two threads (cluster/node-links.ts)
//   rfq-cross      the same against a maker on B: before the fill is answered A asks B for the maker's lock
//                  and B grants it (a journal record on B), A commits; then A posts the lock to B (another)
// CPU is read from /proc/<pid>/stat (10 ms ticks) for the spawned processes and process.cpuUsage for the
// caller; what the machine's other processes took meanwhile is kept beside it. The owners never snapshot
// here: a snapshot's cost follows the book's size, which in a benchmark that leaves every position open is
// the benchmark's own. Results go to bench/results/cluster-money.json. With --unflushed the owners' journals
// are written and never flushed (NOT DURABLE: the storage bound's switch, wal/journal.ts), and the results go
// to cluster-money-unflushed.json: the difference between the two is the flush's share of each figure.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type NatsConnection } from 'nats';
import { MoneyCalls, type MoneyReply } from '../../src/cluster/money-calls.js';
import { natsOptions } from '../../src/cluster/nats-options.js';
import { partitionOfName, partitionOfUser } from '../../src/cluster/partitions.js';
import { encode } from '../../src/cluster/wire.js';
import type { MoneyCall } from '../../src/ledger/money-ops.js';
import { creditRef, makerAccount, userAccount } from '../../src/records/ledger.js';
import { NatsServer, natsServerBinary } from '../../test/helpers/nats-server.js';
import { A, A2, B, look, makerOn, MAP, MAP_TEXT, NODES as OWNER_NODES, userOn } from '../../test/helpers/owner-nodes.js';
import { repoRoot } from '../../test/helpers/paths.js';
import { LatencyHistogram } from '../load/histogram.js';
import { machineInfo } from '../load/machine.js';
import { isRunning, ListeningProcess, startCpuInterval, type CpuInterval } from './cluster-processes.js';

const isQuick = process.argv.includes('--quick');
/** The owners' journals written and never flushed (wal/journal.ts, the storage bound's switch): NOT DURABLE, to see what the flush costs. */
const isUnflushed = process.argv.includes('--unflushed');
const outIndex = process.argv.indexOf('--out');
const OUT_PATH =
  outIndex === -1
    ? resolve(repoRoot, `bench/results/cluster-money${isUnflushed ? '-unflushed' : ''}.json`)
    : resolve(process.argv[outIndex + 1]!);
const TIMING = isQuick ? { runMs: 500, warmupMs: 150, idleMs: 300 } : { runMs: 2_500, warmupMs: 500, idleMs: 1_000 };
/** Each phase's variants run this many times, alternating with each other. */
const ROUNDS = 2;
/** Between runs: channel acknowledgements and the last flushes land before the next run's CPU is read. */
const SETTLE_MS = 200;
const IN_FLIGHT = 16;
/** The owner nodes, as the results name them: their busiest threads are measured apart too. */
const NODES = ['nodeA', 'nodeB'];
const ECHO_SUBJECT = 'bench.echo';
const ECHO_PAYLOAD = new Uint8Array(200).fill(0x61);
/**
 * A money call's deadline, and how long it waits before it is sent again (money-calls.ts): long enough that no
 * call is resent here (each run's maxUs shows it), since a resend is work the figures must not count.
 */
const CALLS = { deadlineMs: 5_000, resendMs: 1_000 };

const OWNER_NODE = new URL('../../src/cluster/shard-node-main.js', import.meta.url).pathname;
const ECHO = new URL('./nats-echo.js', import.meta.url).pathname;

/** Per RFQ, as bench/micro/engine-owner.ts: a 5 USDC reservation, 4 filled, the maker's liability 3.2. */
const RFQ = { reserveMicros: 5_000_000n, filledMicros: 4_000_000n, liabilityMicros: 3_200_000n };
const TAKER_FUNDS = 10n ** 15n;
const MAKER_FUNDS = 10n ** 15n;

type PhaseName = 'nats-echo' | 'money-call' | 'rfq-local' | 'rfq-node' | 'rfq-cross';

export interface Quantiles {
  p50Us: number;
  p99Us: number;
  p999Us: number;
  maxUs: number;
}

export interface RunResult {
  phase: PhaseName;
  inFlight: number;
  round: number;
  seconds: number;
  /** Round trips, money calls answered ok, or RFQs filled. */
  count: number;
  /** Calls or RFQs refused, by code: none when funded. */
  refused: Record<string, number>;
  perS: number;
  /** Per measured step: `roundTrip`; `call`; `reserve`, `fill` and `rfq` (the two together). */
  latency: Record<string, Quantiles>;
  /** CPU µs per counted unit, by process. */
  cpuUsPer: Record<string, number>;
  /** Percent of one core over the run, by process (200 is both cores). */
  cpuPercent: Record<string, number>;
  /** The owner nodes' busiest threads (an owner's, on its worker) alone, in percent of one core: at 100 it is the limit. */
  busiestThreadPercent: Record<string, number>;
  /** What the machine's other processes took meanwhile, in percent of one core: a run they crowded reads high here. */
  othersPercent: number;
}

/** What one run counts as it goes. */
class Tally {
  count = 0;
  readonly refused: Record<string, number> = {};
  readonly histograms = new Map<string, LatencyHistogram>();

  record(step: string, sinceMs: number): void {
    let histogram = this.histograms.get(step);
    if (histogram === undefined) this.histograms.set(step, (histogram = new LatencyHistogram()));
    histogram.recordMs(performance.now() - sinceMs);
  }

  refuse(code: string): void {
    this.refused[code] = (this.refused[code] ?? 0) + 1;
  }
}

interface Cluster {
  nats: NatsServer;
  nodeA: ListeningProcess;
  nodeB: ListeningProcess;
  echo: ListeningProcess;
  nc: NatsConnection;
  money: MoneyCalls;
  /** Processes measured, by name, as the results name them. */
  pids: Record<string, number>;
}

const pairUsers = Array.from({ length: IN_FLIGHT }, (_, lane) => userOn(A, `pair-lane${lane}`));
const takers = Array.from({ length: IN_FLIGHT }, (_, lane) => userOn(A, `taker-lane${lane}`));
const makers = { [A]: makerOn(A), [A2]: makerOn(A2), [B]: makerOn(B) };
/** The RFQ phase of a maker on each owner: the taker's own, its node's other, the other node's. */
const RFQ_PHASE: Record<number, PhaseName> = { [A]: 'rfq-local', [A2]: 'rfq-node', [B]: 'rfq-cross' };
let nextRef = 0;
/** A fresh reference, shaped as an RFQ's id is (a UUID), so requests weigh what the service's do. */
const freshRef = () => `rfq:${(++nextRef).toString(16).padStart(8, '0')}-7abc-4def-8123-456789abcdef`;

async function call(cluster: Cluster, userId: string, moneyCall: MoneyCall): Promise<MoneyReply> {
  return cluster.money.call(partitionOfUser(userId), moneyCall);
}

/** Runs `iterate` on `inFlight` lanes, each calling again as soon as its last call ended, for `durationMs`. */
async function closedLoop(inFlight: number, durationMs: number, iterate: (lane: number) => Promise<void>): Promise<void> {
  const endMs = performance.now() + durationMs;
  await Promise.all(
    Array.from({ length: inFlight }, async (_, lane) => {
      while (performance.now() < endMs) await iterate(lane);
    }),
  );
}

/** A warm-up on a tally thrown away, then the measured run with the CPU of every process. */
async function measuredRun(
  cluster: Cluster,
  inFlight: number,
  iterate: (lane: number, tally: Tally) => Promise<void>,
): Promise<{ tally: Tally; interval: CpuInterval }> {
  const warmup = new Tally();
  await closedLoop(inFlight, TIMING.warmupMs, (lane) => iterate(lane, warmup));
  await sleep(SETTLE_MS);
  const tally = new Tally();
  const stop = startCpuInterval(cluster.pids, NODES);
  await closedLoop(inFlight, TIMING.runMs, (lane) => iterate(lane, tally));
  const interval = stop();
  await sleep(SETTLE_MS);
  return { tally, interval };
}

function runResult(phase: PhaseName, inFlight: number, round: number, { tally, interval }: { tally: Tally; interval: CpuInterval }) {
  const latency: Record<string, Quantiles> = {};
  for (const [step, histogram] of tally.histograms) {
    const { p50Ms, p99Ms, p999Ms, maxMs } = histogram.summary();
    latency[step] = { p50Us: us(p50Ms), p99Us: us(p99Ms), p999Us: us(p999Ms), maxUs: us(maxMs) };
  }
  const cpuUsPer: Record<string, number> = {};
  const cpuPercent: Record<string, number> = {};
  for (const [name, ms] of Object.entries(interval.cpuMs)) {
    cpuUsPer[name] = tally.count === 0 ? 0 : round1((ms * 1000) / tally.count);
    cpuPercent[name] = round1(ms / 10 / interval.seconds);
  }
  const result: RunResult = {
    phase,
    inFlight,
    round,
    seconds: Math.round(interval.seconds * 1000) / 1000,
    count: tally.count,
    refused: tally.refused,
    perS: Math.round(tally.count / interval.seconds),
    latency,
    cpuUsPer,
    cpuPercent,
    busiestThreadPercent: Object.fromEntries(
      Object.entries(interval.busiestThreadMs).map(([name, ms]) => [name, round1(ms / 10 / interval.seconds)]),
    ),
    othersPercent: round1(interval.othersMs / 10 / interval.seconds),
  };
  return result;
}

const us = (ms: number) => Math.round(ms * 1000);
const round1 = (x: number) => Math.round(x * 10) / 10;

async function echoRun(cluster: Cluster, inFlight: number, round: number): Promise<RunResult> {
  const measured = await measuredRun(cluster, inFlight, async (_lane, tally) => {
    const startMs = performance.now();
    const reply = await cluster.nc.request(ECHO_SUBJECT, ECHO_PAYLOAD, { timeout: CALLS.deadlineMs });
    tally.record('roundTrip', startMs);
    if (reply.data.length !== ECHO_PAYLOAD.length) throw new Error(`the echo answered ${reply.data.length} bytes`);
    tally.count++;
  });
  return runResult('nats-echo', inFlight, round, measured);
}

async function moneyCallRun(cluster: Cluster, inFlight: number, round: number): Promise<RunResult> {
  const measured = await measuredRun(cluster, inFlight, async (lane, tally) => {
    const userId = pairUsers[lane]!;
    const ref = freshRef();
    let startMs = performance.now();
    const reserved = await call(cluster, userId, { op: 'reserve', userId, amountMicros: RFQ.reserveMicros, ref });
    tally.record('call', startMs);
    if (!reserved.ok) return tally.refuse(`reserve ${reserved.code}`);
    tally.count++;
    startMs = performance.now();
    const released = await call(cluster, userId, { op: 'release', ref });
    tally.record('call', startMs);
    if (!released.ok) return tally.refuse(`release ${released.code}`);
    tally.count++;
  });
  return runResult('money-call', inFlight, round, measured);
}

async function rfqRun(cluster: Cluster, makerOwner: number, round: number): Promise<RunResult> {
  const makerAddress = makers[makerOwner]!;
  const measured = await measuredRun(cluster, IN_FLIGHT, async (lane, tally) => {
    const userId = takers[lane]!;
    const ref = freshRef();
    const startMs = performance.now();
    const reserved = await call(cluster, userId, { op: 'reserve', userId, amountMicros: RFQ.reserveMicros, ref });
    tally.record('reserve', startMs);
    if (!reserved.ok) return tally.refuse(`reserve ${reserved.code}`);
    const fillStartMs = performance.now();
    const filled = await call(cluster, userId, {
      op: 'fill',
      ref,
      filledMicros: RFQ.filledMicros,
      makerAddress,
      liabilityMicros: RFQ.liabilityMicros,
    });
    tally.record('fill', fillStartMs);
    tally.record('rfq', startMs);
    if (!filled.ok) {
      tally.refuse(`fill ${filled.code}`);
      await call(cluster, userId, { op: 'release', ref }); // as the RFQ would end: its reservation let go
      return;
    }
    tally.count++;
  });
  return runResult(RFQ_PHASE[makerOwner]!, IN_FLIGHT, round, measured);
}

/** The CPU of each process with nothing sent, in percent of one core. */
async function idleCpu(cluster: Cluster): Promise<Record<string, number>> {
  const stop = startCpuInterval(cluster.pids);
  await sleep(TIMING.idleMs);
  const { seconds, cpuMs, othersMs } = stop();
  return {
    ...Object.fromEntries(Object.entries(cpuMs).map(([name, ms]) => [name, round1(ms / 10 / seconds)])),
    others: round1(othersMs / 10 / seconds),
  };
}

/** Credits every account the phases use and waits until each is available on its owner. */
async function fund(cluster: Cluster): Promise<void> {
  const funds: Array<{ account: string; amountMicros: bigint }> = [
    ...pairUsers.map((user) => ({ account: userAccount(user), amountMicros: TAKER_FUNDS })),
    ...takers.map((user) => ({ account: userAccount(user), amountMicros: TAKER_FUNDS })),
    ...Object.values(makers).map((address) => ({ account: makerAccount(address), amountMicros: MAKER_FUNDS })),
  ];
  for (const { account, amountMicros } of funds) {
    const key = `fund-${account}`;
    const answer = await cluster.money.call(partitionOfName(creditRef(key)), { op: 'credit', account, amountMicros, key });
    if (!answer.ok) throw new Error(`funding ${account}: ${answer.code}`);
  }
  // A credit is decided by its key's owner and travels to the account's.
  const untilMs = Date.now() + 10_000;
  for (;;) {
    const books = new Map(await Promise.all(MAP.owners.map(async (owner) => [owner, await look(cluster.nc, owner)] as const)));
    const short = funds.filter(
      ({ account, amountMicros }) => books.get(MAP.ownerOf(account))!.accounts[account]?.['available'] !== String(amountMicros),
    );
    if (short.length === 0) return;
    if (Date.now() > untilMs) throw new Error(`not funded after 10 s: ${short.map(({ account }) => account).join(', ')}`);
    await sleep(50);
  }
}

async function startCluster(root: string, started: ListeningProcess[]): Promise<Cluster> {
  const binary = natsServerBinary();
  if ('missing' in binary) throw new Error(binary.missing);
  const nats = await NatsServer.start(binary.path);
  try {
    const nodeEnv = (node: (typeof OWNER_NODES)[number]) => ({
      PARLAYD_NATS_URL: nats.url,
      PARLAYD_PARTITIONS: node.partitions,
      PARLAYD_PARTITION_MAP: MAP_TEXT.join(';'),
      PARLAYD_DATA_DIR: join(root, node.name.replace(' ', '-')),
      PARLAYD_SNAPSHOT_EVERY_RECORDS: String(1e9),
      PARLAYD_LOG_LEVEL: 'info', // its `listening` line is at info
      ...(isUnflushed ? { PARLAYD_STORAGE_BOUND_UNFLUSHED: '1' } : {}),
    });
    const starting = [
      ListeningProcess.start('nodeA', OWNER_NODE, nodeEnv(OWNER_NODES[0])),
      ListeningProcess.start('nodeB', OWNER_NODE, nodeEnv(OWNER_NODES[1])),
      ListeningProcess.start('echo', ECHO, { PARLAYD_NATS_URL: nats.url, PARLAYD_ECHO_SUBJECT: ECHO_SUBJECT }),
    ];
    const settled = await Promise.allSettled(starting);
    for (const outcome of settled) if (outcome.status === 'fulfilled') started.push(outcome.value);
    const failed = settled.find((outcome) => outcome.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const [nodeA, nodeB, echo] = started as [ListeningProcess, ListeningProcess, ListeningProcess];
    const nc = await connect({ servers: nats.url, ...natsOptions('bench-caller') });
    const pids = { nodeA: nodeA.pid, nodeB: nodeB.pid, natsServer: nats.pid!, echo: echo.pid };
    return { nats, nodeA, nodeB, echo, nc, money: new MoneyCalls(nc, CALLS), pids };
  } catch (error) {
    await nats.stop();
    throw error;
  }
}

/** What the run writes to its results file (read back by test/bench/cluster-money.test.ts). */
export interface ClusterMoneyResults {
  at: string;
  isQuick: boolean;
  isUnflushed: boolean;
  commit: string | null;
  machine: unknown;
  loadAverageAtStart: number[];
  settings: unknown;
  sizes: Record<string, number>;
  pids: Record<string, number>;
  /** Spawned processes still running after the stop: must be none. */
  leftBehind: string[];
  idleCpuPercent: Record<string, number>;
  summary: SummaryRow[];
  runs: RunResult[];
}

export interface SummaryRow {
  phase: PhaseName;
  inFlight: number;
  rounds: number;
  perS: number;
  /** Lowest and highest rate of the rounds, and their difference in percent of the mean. */
  perSRange: [number, number];
  spreadPercent: number;
  /** The main step's latency (`roundTrip`, `call`, `fill`), mean of the rounds' quantiles and their range. */
  p50Us: number;
  p50UsRange: [number, number];
  p99Us: number;
  p99UsRange: [number, number];
  cpuUsPer: Record<string, number>;
  /** The most the machine's other processes took in any of the rounds, in percent of one core. */
  othersPercentMax: number;
}

const MAIN_STEP: Record<PhaseName, string> = {
  'nats-echo': 'roundTrip',
  'money-call': 'call',
  'rfq-local': 'fill',
  'rfq-node': 'fill',
  'rfq-cross': 'fill',
};

function summarize(runs: readonly RunResult[]): SummaryRow[] {
  const groups = new Map<string, RunResult[]>();
  for (const run of runs) {
    const key = `${run.phase}/${run.inFlight}`;
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const range = (xs: number[]): [number, number] => [Math.min(...xs), Math.max(...xs)];
  return [...groups.values()].map((group) => {
    const { phase, inFlight } = group[0]!;
    const rates = group.map((run) => run.perS);
    const quantile = (name: 'p50Us' | 'p99Us') => group.map((run) => run.latency[MAIN_STEP[phase]]![name]);
    const cpuUsPer = Object.fromEntries(
      Object.keys(group[0]!.cpuUsPer).map((name) => [name, round1(mean(group.map((run) => run.cpuUsPer[name]!)))]),
    );
    return {
      phase,
      inFlight,
      rounds: group.length,
      perS: Math.round(mean(rates)),
      perSRange: range(rates),
      spreadPercent: round1(((Math.max(...rates) - Math.min(...rates)) / mean(rates)) * 100),
      p50Us: Math.round(mean(quantile('p50Us'))),
      p50UsRange: range(quantile('p50Us')),
      p99Us: Math.round(mean(quantile('p99Us'))),
      p99UsRange: range(quantile('p99Us')),
      cpuUsPer,
      othersPercentMax: Math.max(...group.map((run) => run.othersPercent)),
    };
  });
}

/** The commit measured, `-dirty` when tracked files differ from it. */
function gitCommit(): string | null {
  const out = spawnSync('git', ['describe', '--always', '--dirty', '--abbrev=10'], { cwd: repoRoot, encoding: 'utf8' });
  return out.status === 0 ? out.stdout.trim() : null;
}

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const loadAverageAtStart = loadavg().map((x) => Math.round(x * 100) / 100);
  const machine = machineInfo();
  const root = mkdtempSync(join(tmpdir(), 'parlayd-cluster-money-'));
  const started: ListeningProcess[] = [];
  let cluster: Cluster | null = null;
  // Stopped from outside (Ctrl-C): no process of the run is left behind.
  const onSignal = () => {
    for (const child of started) if (isRunning(child.pid)) process.kill(child.pid, 'SIGKILL');
    const natsPid = cluster?.nats.pid;
    if (natsPid != null) process.kill(natsPid, 'SIGKILL');
    process.exit(130);
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);

  const runs: RunResult[] = [];
  let idle: Record<string, number> = {};
  let pids: Record<string, number> = {};
  try {
    cluster = await startCluster(root, started);
    pids = cluster.pids;
    await fund(cluster);
    idle = await idleCpu(cluster);
    for (let round = 1; round <= ROUNDS; round++) for (const inFlight of [1, IN_FLIGHT]) runs.push(await echoRun(cluster, inFlight, round));
    for (let round = 1; round <= ROUNDS; round++)
      for (const inFlight of [1, IN_FLIGHT]) runs.push(await moneyCallRun(cluster, inFlight, round));
    for (let round = 1; round <= ROUNDS; round++) for (const makerOwner of [A, A2, B]) runs.push(await rfqRun(cluster, makerOwner, round));
  } finally {
    await cluster?.nc.close();
    await Promise.all(started.map((child) => child.stop()));
    await cluster?.nats.stop();
    rmSync(root, { recursive: true, force: true });
  }
  const leftBehind = Object.entries(pids)
    .filter(([, pid]) => isRunning(pid))
    .map(([name, pid]) => `${name} (${pid})`);

  const summary = summarize(runs);
  console.table(
    summary.map(({ phase, inFlight, perS, spreadPercent, p50Us, p99Us, cpuUsPer, othersPercentMax }) => ({
      phase,
      inFlight,
      perS,
      'spread %': spreadPercent,
      p50Us,
      p99Us,
      ...Object.fromEntries(Object.entries(cpuUsPer).map(([name, value]) => [`${name} µs`, value])),
      'others %': othersPercentMax,
    })),
  );
  console.log('idle CPU, % of a core:', idle);
  const sizes = {
    echoPayloadBytes: ECHO_PAYLOAD.length,
    // As MoneyCalls sends them: with the call's request id.
    reserveRequestBytes: encode({
      id: randomUUID(),
      call: { op: 'reserve', userId: takers[0], amountMicros: RFQ.reserveMicros, ref: freshRef() },
      facts: [],
    }).length,
    fillRequestBytes: encode({
      id: randomUUID(),
      call: { op: 'fill', ref: freshRef(), filledMicros: RFQ.filledMicros, makerAddress: makers[B], liabilityMicros: RFQ.liabilityMicros },
      facts: [],
    }).length,
    okReplyBytes: encode({ ok: true }).length,
  };
  const results = {
    at: startedAt,
    isQuick,
    isUnflushed,
    commit: gitCommit(),
    machine,
    loadAverageAtStart,
    settings: { ...TIMING, rounds: ROUNDS, settleMs: SETTLE_MS, inFlight: IN_FLIGHT, dataDir: tmpdir(), snapshots: 'off' },
    sizes,
    pids,
    leftBehind,
    idleCpuPercent: idle,
    summary,
    runs,
  } satisfies ClusterMoneyResults;
  mkdirSync(dirname(OUT_PATH), { recursive: true });
  writeFileSync(OUT_PATH, `${JSON.stringify(results, null, 2)}\n`);
  if (leftBehind.length > 0) throw new Error(`processes left behind: ${leftBehind.join(', ')}`);
}

await main();
