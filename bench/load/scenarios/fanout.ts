// Scenario `fanout`: 1, 10, 100, 1,000 (and, by BENCH_FANOUT_MAKERS, up to 10,000) connected makers, the
// service against a bare reference in the same run (bare-fanout-server.ts: a plain uWS server sending the
// same rfq frames to the same number of sockets, nothing else; as `ceiling` is for GET). Latency from
// admission to the last maker receiving: the client notes the epoch time just before it sends the POST,
// every maker connection notes when the rfq frame reached it (maker worker, its own event loop), and the
// figure is last receipt - send. RFQs are sampled one at a time with makers declining, so each ends as soon
// as all have answered and no RFQ queues behind another. Then a closed-loop phase measures RFQ/s and maker
// deliveries/s at each N.
//
// At every size: the makers connect in steps, 32 logins at a time, each refused login (429/503) tried again
// after its Retry-After (maker-worker.ts); then the scenario waits until the server answers a probe promptly
// (its loop is no longer busy with the logins); and an RFQ refused 503 OVERLOADED is sent again after its
// Retry-After and counted (`shed`), never fatal. Each size runs the bare server (a farm of its own,
// connected for that size and closed) just before the service (one farm, grown size by size).
import { Pool } from 'undici';
import { PROBE_INTERVAL_MS } from '../../../src/http/load-shedder.js';
import { fundedUsers, openMarkets, registerMakers } from '../fixtures.js';
import { fanoutVsBare, type FanoutVsBare } from '../fanout-targets.js';
import { LatencyHistogram, type LatencySummary } from '../histogram.js';
import { runClosedLoop } from '../closed-loop.js';
import { DEFAULT_CONNECTIONS } from '../http-client.js';
import { MakerFarm, nowEpochMs } from '../makers.js';
import type { FanoutReceipt } from '../maker-messages.js';
import { CREDIT_MICROS, isTerminalWith, prepareUnsigned, requestIdOf, type PreparedRfq, type RfqAnswer } from '../rfq-traffic.js';
import { spawnListening } from './ceiling.js';
import { sleep, startServerFor, stepMs, type RunContext, type Scenario } from './context.js';

const WAIT_MS = 5000;
/** Client threads receiving the fan-out: with one, 1,000 frames queue behind each other in the client. */
const FARM_WORKERS = 4;
/** Logins in progress at once, farm-wide: half the service's default per-network bound on pending ones (64). */
const LOGIN_CONCURRENCY = 32;
/** The service's default PARLAYD_MM_MAX_SOCKETS_PER_MAKER: enough maker wallets are registered to stay under it. */
const DEFAULT_SOCKETS_PER_MAKER = 4;
/** Settled: this many probes in a row each answered within SETTLED_PROBE_MS. */
const SETTLED_PROBES = 10;
const SETTLED_PROBE_MS = 5;
const SETTLE_LIMIT_MS = 60_000;
/** Closed-loop callers: 32, fewer from 1,000 makers on (rfqs in flight x makers <= FRAMES_IN_FLIGHT). */
const MAX_CALLERS = 32;
/**
 * Rfq frames in flight at once in the closed loop, at most. With 32 callers at 10,000 makers, 320,000
 * frames and their declines were in flight: a round outlasted the 5 s wait on the bare server as on the
 * service, and the figure was timeouts, not deliveries. 32,000 keeps a round near a second at the deliveries
 * this 2-core machine's client reaches (~30,000-40,000/s), and leaves 1 to 1,000 makers at 32 callers.
 */
const FRAMES_IN_FLIGHT = 32_000;

export const closedLoopCallers = (makers: number) => Math.max(1, Math.min(MAX_CALLERS, Math.floor(FRAMES_IN_FLIGHT / makers)));

/** A 503 is sent again after its Retry-After this many times at most before it counts as an error. */
const MAX_SHED_RETRIES = 30;

/** One server's figures at one size. */
export interface FanoutSideResult {
  samples: number;
  missedReceipts: number;
  /** POST sent -> last maker received the rfq, ms (a shed POST: from the send that was admitted). */
  lastMaker: LatencySummary;
  /** POST sent -> first maker received it, ms. */
  firstMaker: LatencySummary;
  /** Closed loop (`concurrency` callers, wait_ms until terminal), makers declining. */
  concurrency: number;
  /** A closed-loop RFQ from its POST to its answer, ms: the round trip of every maker's decline. */
  closedLoopP50Ms: number;
  rfqPerS: number;
  deliveriesPerS: number;
  /**
   * The server's main thread's CPU over the closed loop per delivery, µs (from /proc): what a delivery and
   * its maker's decline cost that thread, whatever the shared machine let the rate be. Null in older results.
   */
  mainThreadUsPerDelivery?: number | null;
  errors: number;
  /** 503s answered (sampling and closed loop), each sent again after its Retry-After. */
  shed: number;
  /** Connecting this step's new makers: ms, and logins refused for now and retried. */
  connectMs: number;
  connectRetries: number;
  /** From the last login to the server answering probes promptly, ms. */
  settleMs: number;
}

export interface FanoutStep extends FanoutSideResult {
  makers: number;
  /** Server side, mean ms the main thread spent publishing one rfq to every maker (parlayd_rfq_fanout_seconds). */
  serverBroadcastMs: number;
  /** The bare reference at the same size (null in a result from before it existed). */
  bare: FanoutSideResult | null;
  vsBare: FanoutVsBare | null;
}

export interface FanoutResult {
  steps: FanoutStep[];
}

/** Where RFQs go: the service's unsigned route with wait_ms, or the bare server's POST /rfq. */
interface Target {
  pool: Pool;
  /** The request for RFQ number i (the same prepared bodies both sides). */
  rfq(i: number): PreparedRfq;
  /** A cheap GET answered by the server's main thread. */
  probePath: string;
  /** The server's process, whose main thread's CPU the closed loop reads from /proc. */
  serverPid: number;
}

/** An RFQ's answer, and when (epoch ms) the send that got it left: after a 503, the repeat's. */
interface PacedAnswer extends RfqAnswer {
  sentMs: number;
}

/** POSTs an RFQ; a 503 is sent again after its Retry-After (counted in `shed`). */
async function postPaced(pool: Pool, rfq: PreparedRfq, counters: { shed: number }): Promise<PacedAnswer> {
  for (let attempt = 0; ; attempt++) {
    const sentMs = nowEpochMs();
    const res = await pool.request({ method: 'POST', path: rfq.path, headers: rfq.headers, body: rfq.body });
    const text = await res.body.text();
    if (res.statusCode !== 503 || attempt >= MAX_SHED_RETRIES) return { status: res.statusCode, text, sentMs };
    counters.shed++;
    const retryAfterS = Number(res.headers['retry-after'] ?? 1);
    await sleep((Number.isFinite(retryAfterS) ? retryAfterS : 1) * 1000);
  }
}

/** Ms a probe took (a GET the server's main thread answers). */
async function probeMs(target: Target): Promise<number> {
  const sentMs = performance.now();
  const res = await target.pool.request({ method: 'GET', path: target.probePath });
  await res.body.text();
  return performance.now() - sentMs;
}

/**
 * Before a sample: until a probe is answered within SETTLED_PROBE_MS (the last RFQ's broadcast and its
 * declines are done), then two of the service's shedder probe intervals, so that its delay reading has
 * seen the idle loop too (PROBE_INTERVAL_MS): a sample measures one fan-out to an idle server.
 */
async function untilIdle(target: Target): Promise<void> {
  const startMs = performance.now();
  while ((await probeMs(target)) > SETTLED_PROBE_MS && performance.now() - startMs < SETTLE_LIMIT_MS) await sleep(1);
  await sleep(2 * PROBE_INTERVAL_MS);
}

/** Waits until the server answers SETTLED_PROBES probes in a row within SETTLED_PROBE_MS each; returns ms. */
async function settle(target: Target): Promise<number> {
  const startMs = performance.now();
  let inARow = 0;
  while (inARow < SETTLED_PROBES) {
    if (performance.now() - startMs > SETTLE_LIMIT_MS) throw new Error(`fanout: server not settled after ${SETTLE_LIMIT_MS} ms`);
    inARow = (await probeMs(target)) <= SETTLED_PROBE_MS ? inARow + 1 : 0;
    await sleep(PROBE_INTERVAL_MS);
  }
  return Math.round(performance.now() - startMs);
}

/**
 * The rfq's receipt once every maker has it, or what came within WAIT_MS. The service may end an RFQ (its
 * quote window) before the client has read the frame on every socket, at 5,000 makers and more; reading
 * the receipt at the answer then dropped exactly the slowest samples. A read forgets what it returned, so
 * the parts are merged.
 */
async function wholeReceipt(farm: MakerFarm, requestId: string, makers: number): Promise<FanoutReceipt | null> {
  let receipt = await farm.receipt(requestId);
  const deadlineMs = performance.now() + WAIT_MS;
  while ((receipt?.count ?? 0) < makers && performance.now() < deadlineMs) {
    await sleep(5);
    const more = await farm.receipt(requestId);
    if (more === null) continue;
    receipt =
      receipt === null
        ? more
        : {
            count: receipt.count + more.count,
            firstMs: Math.min(receipt.firstMs, more.firstMs),
            lastMs: Math.max(receipt.lastMs, more.lastMs),
          };
  }
  return receipt;
}

/** Connects the farm up to `makers`, waits for the server to settle, and measures one step. */
async function measureSide(
  ctx: RunContext,
  target: Target,
  farm: MakerFarm,
  connect: (count: number) => ReturnType<MakerFarm['connect']>,
  makers: number,
  connectedBefore: number,
): Promise<FanoutSideResult> {
  const added = await connect(makers - connectedBefore);
  if (added.connected !== makers) throw new Error(`fanout: ${added.connected} makers connected, wanted ${makers}`);
  const settleMs = await settle(target);
  await farm.setPolicy('decline', true);
  const samples = ctx.isQuick ? 20 : 300;
  const lastMaker = new LatencyHistogram();
  const firstMaker = new LatencyHistogram();
  const counters = { shed: 0 };
  let missedReceipts = 0;
  let next = 0;
  // Warm-up: a few RFQs through the same path first.
  for (let i = 0; i < samples + 10; i++) {
    await untilIdle(target);
    const answer = await postPaced(target.pool, target.rfq(next++), counters);
    if (!isTerminalWith(answer, 'timeout')) throw new Error(`fanout RFQ: ${answer.status} ${answer.text}`);
    const receipt = await wholeReceipt(farm, requestIdOf(answer), makers);
    if (i < 10) continue;
    if (receipt === null || receipt.count !== makers) {
      missedReceipts++;
      continue;
    }
    lastMaker.recordMs(receipt.lastMs - answer.sentMs);
    firstMaker.recordMs(receipt.firstMs - answer.sentMs);
  }
  await farm.setPolicy('decline', false);
  const concurrency = closedLoopCallers(makers);
  const throughput = await runClosedLoop({
    concurrency,
    durationMs: stepMs(ctx, 3000),
    warmupMs: stepMs(ctx, 500, 200),
    request: async () => isTerminalWith(await postPaced(target.pool, target.rfq(next++), counters), 'timeout'),
    serverPid: target.serverPid,
  });
  const deliveries = throughput.completed * makers;
  const mainThreadPercent = throughput.cpu?.serverMainThreadPercent;
  return {
    samples,
    missedReceipts,
    lastMaker: lastMaker.summary(),
    firstMaker: firstMaker.summary(),
    concurrency,
    closedLoopP50Ms: throughput.latency.p50Ms,
    rfqPerS: throughput.reqPerS,
    // From the count, not the rounded RFQ/s: at 10,000 makers one RFQ/s more or less is 10,000 deliveries/s.
    deliveriesPerS: Math.round(deliveries / throughput.seconds),
    mainThreadUsPerDelivery:
      mainThreadPercent === undefined || deliveries === 0
        ? null
        : Math.round(((mainThreadPercent / 100) * throughput.seconds * 1e6 * 100) / deliveries) / 100,
    errors: throughput.errors,
    shed: counters.shed,
    connectMs: Math.round(added.ms),
    connectRetries: added.retries,
    settleMs,
  };
}

/** The server's own fan-out histogram (sum and count) from GET /metrics (admin bearer). */
async function serverBroadcastSeconds(server: { baseUrl: string; adminToken: string }): Promise<{ sum: number; count: number }> {
  const text = await (await fetch(server.baseUrl + '/metrics', { headers: { authorization: `Bearer ${server.adminToken}` } })).text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
  return { sum: read('parlayd_rfq_fanout_seconds_sum'), count: read('parlayd_rfq_fanout_seconds_count') };
}

function sizesOf(ctx: RunContext): number[] {
  const sizes = process.env['BENCH_FANOUT_MAKERS']?.split(',').map(Number) ?? (ctx.isQuick ? [1, 10, 100] : [1, 10, 100, 1000]);
  if (sizes.some((n, i) => !Number.isInteger(n) || n < 1 || (i > 0 && n <= sizes[i - 1]!)))
    throw new Error(`BENCH_FANOUT_MAKERS: increasing positive integers, got ${process.env['BENCH_FANOUT_MAKERS']}`);
  return sizes;
}

const newFarm = () => new MakerFarm(Number(process.env['BENCH_FANOUT_WORKERS'] ?? FARM_WORKERS));

/**
 * RFQ bodies per service step: warm-up, samples, and a closed loop of 32 callers for 3.5 s at a few thousand
 * RFQ/s. Each is sent once (a body sent twice would be an idempotent replay, not a new RFQ).
 */
const rfqsPerStep = (ctx: RunContext) => (ctx.isQuick ? 10_000 : 20_000);

function nth(bodies: readonly PreparedRfq[], i: number): PreparedRfq {
  const rfq = bodies[i];
  if (rfq === undefined) throw new Error(`fanout: more than ${bodies.length} RFQs in one step; raise rfqsPerStep`);
  return rfq;
}

/** The bare server (a child process) and the pool that posts to it, for the whole run. */
async function startBare(bodies: readonly PreparedRfq[]): Promise<{ target: Target; wsUrl: string; stop(): Promise<void> }> {
  const { child, port } = await spawnListening('bare-fanout-server.js', []);
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: DEFAULT_CONNECTIONS, pipelining: 1 });
  return {
    // The bare server ignores the body: the same few are sent again and again.
    target: { pool, rfq: (i) => ({ ...bodies[i % bodies.length]!, path: '/rfq' }), probePath: '/probe', serverPid: child.pid! },
    wsUrl: `ws://127.0.0.1:${port}`,
    stop: async () => {
      await pool.close();
      child.kill('SIGTERM');
    },
  };
}

/**
 * One size against the bare server, with a farm of its own connected from none and closed after: at 10,000
 * makers it holds 10,000 sockets beside the service farm's 5,000 of the size before, where both farms at
 * full size would pass this machine's 20,000 open files (`ulimit -Hn`).
 */
async function measureBare(ctx: RunContext, bare: Awaited<ReturnType<typeof startBare>>, makers: number): Promise<FanoutSideResult> {
  const farm = newFarm();
  // No wallets: the bare server tells every socket auth_result success before it signs anything.
  const none = [{ privateKey: new Uint8Array(32), checksumAddress: '0x' + '0'.repeat(40) }];
  try {
    const side = await measureSide(
      ctx,
      bare.target,
      farm,
      (n) => farm.connect({ wsUrl: bare.wsUrl, env: {} }, none, n, LOGIN_CONCURRENCY),
      makers,
      0,
    );
    ctx.log(
      `bare fanout ${makers} makers: last maker p50 ${side.lastMaker.p50Ms} p99 ${side.lastMaker.p99Ms} ms; ` +
        `${side.rfqPerS} RFQ/s = ${side.deliveriesPerS} deliveries/s (closed loop p50 ${side.closedLoopP50Ms} ms; ` +
        `main thread ${side.mainThreadUsPerDelivery} µs per delivery)`,
    );
    return side;
  } finally {
    await farm.close().catch(() => undefined);
  }
}

export const fanout: Scenario<FanoutResult> = {
  name: 'fanout',
  describe: 'admission -> last maker receiving, and deliveries/s, with 1 .. 1,000 connected makers, against a bare uWS fan-out',
  async run(ctx) {
    const sizes = sizesOf(ctx);
    const server = await startServerFor(ctx);
    const pool = new Pool(server.baseUrl, { connections: DEFAULT_CONNECTIONS, pipelining: 1 });
    let farm: MakerFarm | null = null;
    let stopBare: () => Promise<void> = async () => undefined;
    try {
      const users = await fundedUsers(server, 8, CREDIT_MICROS);
      const markets = await openMarkets(server, 8);
      // The bare reference, with bodies of the same shape the service never sees.
      const bare = await startBare(prepareUnsigned(users, markets, 1000, WAIT_MS));
      stopBare = bare.stop;
      const perMaker = Number(server.env['PARLAYD_MM_MAX_SOCKETS_PER_MAKER'] ?? DEFAULT_SOCKETS_PER_MAKER);
      // Distinct maker wallets enough for the largest size within the per-maker socket cap (4: 2,500 for 10,000).
      const wallets = await registerMakers(server, Math.max(20, Math.ceil(sizes.at(-1)! / perMaker)), 16);
      let stepBodies: PreparedRfq[] = [];
      const target: Target = { pool, rfq: (i) => nth(stepBodies, i), probePath: '/healthz', serverPid: server.pid };
      const serviceFarm = newFarm();
      farm = serviceFarm;
      const steps: FanoutStep[] = [];
      let connected = 0;
      for (const makers of sizes) {
        // Each size measures the bare server just before the service, so both see the machine as it is then
        // (other load on a shared machine drifts over a run of minutes).
        const bareSide = await measureBare(ctx, bare, makers);
        stepBodies = prepareUnsigned(users, markets, rfqsPerStep(ctx), WAIT_MS);
        const broadcastBefore = await serverBroadcastSeconds(server);
        const side = await measureSide(
          ctx,
          target,
          serviceFarm,
          (n) => serviceFarm.connect(server, wallets, n, LOGIN_CONCURRENCY),
          makers,
          connected,
        );
        connected = makers;
        const broadcastAfter = await serverBroadcastSeconds(server);
        const serverBroadcastMs =
          Math.round(((broadcastAfter.sum - broadcastBefore.sum) / Math.max(1, broadcastAfter.count - broadcastBefore.count)) * 1e6) / 1000;
        const step: FanoutStep = { makers, ...side, serverBroadcastMs, bare: bareSide, vsBare: fanoutVsBare(side, bareSide) };
        steps.push(step);
        ctx.log(
          `fanout ${makers} makers: last maker p50 ${step.lastMaker.p50Ms} p99 ${step.lastMaker.p99Ms} max ${step.lastMaker.maxMs} ms; ` +
            `server broadcast ${step.serverBroadcastMs} ms; ${step.rfqPerS} RFQ/s = ${step.deliveriesPerS} deliveries/s ` +
            `(closed loop p50 ${step.closedLoopP50Ms} ms; main thread ${step.mainThreadUsPerDelivery} µs per delivery); ` +
            `${step.shed} shed; vs bare: deliveries ${step.vsBare!.deliveries}x, p99 ${step.vsBare!.lastMakerP99}x ` +
            `(connect ${step.connectMs} ms, ${step.connectRetries} logins retried, settled in ${step.settleMs} ms)`,
        );
      }
      return { steps };
    } finally {
      await farm?.close().catch(() => undefined);
      await stopBare();
      await pool.close();
      await server.stop();
    }
  },
};
