// `npm run chaos -- --rounds N [--seed N]`: N rounds on one data directory. Each round starts the real
// service (a child process on 127.0.0.1), runs a mixed load (RFQs a logged-in maker quotes and fills, admin
// credits, contest entries, a market's resolution with its settlement) and kills it with SIGKILL at a
// seeded random moment. Then it restarts and checks every acknowledged write: each acked RFQ is found by
// its owner, each acked credit key replays as 200 without crediting again, the contest counts at least the
// acked entries, each acked withdrawal replays as itself and each acked operator decision (complete, fail)
// stands; and, stopped, the ledger audit of the data dir has no difference. Bounded: rounds, requests per
// round, and a time limit per round.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { auditLedger } from '../src/ledger/audit.js';
import { openStore } from '../src/store/db.js';
import { Progress } from './progress.js';
import { runClusterChaos } from './chaos-cluster.js';
import { runGatewayChaos } from './chaos-gateway.js';
import { contestConfig, createContest, enter, getDetail, up } from '../test/helpers/contests.js';
import { admin, client, type HttpResult } from '../test/helpers/http.js';
import { connectMaker, registerMaker, type TestMaker } from '../test/helpers/makers.js';
import { createMarket } from '../test/helpers/markets.js';
import { autoQuote, unsignedBody } from '../test/helpers/rfq.js';
import { startServer, type TestServer } from '../test/helpers/server.js';
import { fundedUser, type TestUser } from '../test/helpers/users.js';
import { int, prng, type Rng } from './fuzz/gen.js';

const WAGER_MICROS = 1_000_000;
const TAKERS = 6;
/** Requests of each kind per round: enough to be in flight when the kill comes, few enough for 2 cores. */
const PER_KIND = 24;
/** The kill comes this long after the load starts: early (creates in flight) to late (settlements). */
/** Withdrawals asked for, and operator decisions on earlier ones, per round. */
const WITHDRAWALS_PER_ROUND = 6;
const DECISIONS_PER_ROUND = 4;
const DESTINATION = `0x${'5a'.repeat(20)}`;
const KILL_MIN_MS = 20;
const KILL_MAX_MS = 400;
const ROUND_TIMEOUT_MS = 60_000;
// Two shards, so money of one round lives on both; the long quote window keeps a slow machine from timing
// RFQs out (the maker answers each at once, which closes it).
const ENV = { PARLAYD_SHARDS: '2', PARLAYD_QUOTE_WINDOW_MS: '2000', PARLAYD_RATE_LIMIT_PER_S: '0' };

interface World {
  dataDir: string;
  env: Record<string, string>;
  takers: TestUser[];
  maker: TestMaker;
  contestId: string;
  entryMarket: number;
  /** Acked across all rounds: every one must survive every later crash too. */
  ackedRfqs: Array<{ taker: TestUser; requestId: string }>;
  ackedCredits: Array<{ taker: TestUser; key: string }>;
  ackedEntries: number;
  ackedWithdrawals: AckedWithdrawal[];
  /** Acked withdrawals no decision was sent for yet (a decision cut off by the kill may have committed). */
  undecided: AckedWithdrawal[];
  ackedDecisions: Array<{ withdrawal: AckedWithdrawal; end: 'complete' | 'fail' }>;
}

interface AckedWithdrawal {
  taker: TestUser;
  key: string;
  withdrawalId: string;
}

const withdrawalBody = (key: string) => ({ amount_micros: WAGER_MICROS, destination: DESTINATION, idempotency_key: key });

export interface ChaosReport {
  rounds: number;
  ackedRfqs: number;
  ackedCredits: number;
  ackedEntries: number;
  ackedWithdrawals: number;
  ackedDecisions: number;
  killAfterMs: number[];
}

async function start(world: World): Promise<TestServer> {
  return startServer({ dataDir: world.dataDir, env: { ...world.env, PARLAYD_PORT: '0' } });
}

async function setUp(): Promise<{ world: World; server: TestServer }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-chaos-'));
  const server = await startServer({ dataDir, env: ENV });
  const takers = await Promise.all(Array.from({ length: TAKERS }, () => fundedUser(server, 1000 * WAGER_MICROS)));
  const maker = await registerMaker(server);
  const entryMarket = (await createMarket(server, 'chaos')).market_id as number;
  const contest = await createContest(server, contestConfig([entryMarket], { bet_amount_micros: WAGER_MICROS, entry_cap: 100_000 }));
  const world: World = {
    dataDir,
    env: server.env,
    takers,
    maker,
    contestId: contest.contest_id as string,
    entryMarket,
    ackedRfqs: [],
    ackedCredits: [],
    ackedEntries: 0,
    ackedWithdrawals: [],
    undecided: [],
    ackedDecisions: [],
  };
  return { world, server };
}

/** One round's load, started all at once; resolves with nothing, recording what was acknowledged. */
function startLoad(server: TestServer, world: World, rng: Rng, market: number): Promise<unknown> {
  const jobs: Array<Promise<unknown>> = [];
  const each = <T>(request: () => Promise<HttpResult<T>>, onOk: (r: HttpResult<T>) => void) =>
    // A request the kill cut off has no answer: it was not acknowledged, so nothing is expected of it.
    jobs.push(
      request()
        .then((r) => r.status < 300 && onOk(r))
        .catch(() => undefined),
    );
  for (let i = 0; i < PER_KIND; i++) {
    const taker = world.takers[int(rng, world.takers.length)]!;
    const body = unsignedBody([{ market_id: market, direction: 'up' }], { wager_micros: WAGER_MICROS });
    each(
      () => client(server.baseUrl, taker.token).post('/v1/rfq/unsigned?wait_ms=3000', body),
      (r) => {
        world.ackedRfqs.push({ taker, requestId: r.body.request_id as string });
      },
    );
    const key = randomUUID();
    const creditBody = { wallet: taker.address, amount_micros: WAGER_MICROS, idempotency_key: key };
    each(
      () => admin(server).post('/v1/admin/users/credit', creditBody),
      () => world.ackedCredits.push({ taker, key }),
    );
    each(
      () => enter(server, taker, world.contestId, [up(world.entryMarket)]),
      () => world.ackedEntries++,
    );
  }
  for (let i = 0; i < WITHDRAWALS_PER_ROUND; i++) {
    const taker = world.takers[int(rng, world.takers.length)]!;
    const key = randomUUID();
    each(
      () => client(server.baseUrl, taker.token).post('/v1/user/withdrawals', withdrawalBody(key)),
      (r) => {
        const withdrawal = { taker, key, withdrawalId: r.body.withdrawal_id as string };
        world.ackedWithdrawals.push(withdrawal);
        world.undecided.push(withdrawal);
      },
    );
  }
  for (const withdrawal of world.undecided.splice(0, DECISIONS_PER_ROUND)) {
    const end = int(rng, 2) === 0 ? 'complete' : 'fail';
    each(
      () => admin(server).post(`/v1/admin/withdrawals/${withdrawal.withdrawalId}/${end}`, {}),
      () => world.ackedDecisions.push({ withdrawal, end }),
    );
  }
  // The round's market is resolved part way through: its fills settle while RFQs on it are still coming.
  const resolveAfterMs = int(rng, KILL_MAX_MS);
  jobs.push(
    sleep(resolveAfterMs)
      .then(() => admin(server).post(`/v1/admin/markets/${market}/resolve`, { outcome: 'YES' }))
      .catch(() => undefined),
  );
  return Promise.all(jobs);
}

async function checkAcked(server: TestServer, world: World): Promise<void> {
  for (const { taker, requestId } of world.ackedRfqs) {
    const found = await client(server.baseUrl, taker.token).get(`/v1/rfq/${requestId}`);
    assert.equal(found.status, 200, `acked RFQ ${requestId} is found by its owner`);
  }
  const balances = async () =>
    Promise.all(world.takers.map(async (t) => JSON.stringify((await client(server.baseUrl, t.token).get('/v1/user/balance')).body)));
  const before = await balances();
  for (const { taker, key } of world.ackedCredits) {
    const replay = await admin(server).post('/v1/admin/users/credit', {
      wallet: taker.address,
      amount_micros: WAGER_MICROS,
      idempotency_key: key,
    });
    assert.equal(replay.status, 200, `acked credit ${key} replays as 200`);
  }
  assert.deepEqual(await balances(), before, 'replaying acked credits credits nothing');
  for (const { taker, key, withdrawalId } of world.ackedWithdrawals) {
    const replay = await client(server.baseUrl, taker.token).post('/v1/user/withdrawals', withdrawalBody(key));
    assert.equal(replay.body.withdrawal_id, withdrawalId, `acked withdrawal ${withdrawalId} replays as itself`);
  }
  for (const { withdrawal, end } of world.ackedDecisions) {
    // The same end again answers 200 and changes nothing; had the decision been lost, the other end would
    // not have been refused either, so the status is what proves it stood.
    const again = await admin(server).post(`/v1/admin/withdrawals/${withdrawal.withdrawalId}/${end}`, {});
    assert.equal(again.status, 200, `acked ${end} of ${withdrawal.withdrawalId} stands`);
    assert.equal(again.body.status, end === 'complete' ? 'completed' : 'failed');
  }
  assert.deepEqual(await balances(), before, 'replaying acked withdrawals and decisions moves nothing');
  const filled = (await getDetail(server, world.contestId)).body.entries_filled as number;
  assert.ok(filled >= world.ackedEntries, `the contest counts ${filled} entries, ${world.ackedEntries} were acked`);
}

async function auditStopped(dataDir: string): Promise<void> {
  const store = openStore(dataDir);
  try {
    assert.deepEqual(auditLedger(store).differences, [], 'the ledger agrees with itself');
  } finally {
    await store.close();
  }
}

export async function runChaos(rounds: number, seed: number, log: (line: string) => void = () => undefined): Promise<ChaosReport> {
  const rng = prng(seed);
  const { world, server: first } = await setUp();
  let server = first;
  const killAfterMs: number[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      const roundDeadline = Date.now() + ROUND_TIMEOUT_MS;
      const market = (await createMarket(server)).market_id;
      const maker = await connectMaker(server, world.maker);
      const quoting = autoQuote(maker, { odds: 2 });
      const load = startLoad(server, world, rng, market);
      const afterMs = KILL_MIN_MS + int(rng, KILL_MAX_MS - KILL_MIN_MS);
      killAfterMs.push(afterMs);
      await sleep(afterMs);
      await server.kill();
      quoting.stop();
      await load;
      server = await start(world);
      // Settles what the crash cut short, whether or not the resolution was durable before it.
      await admin(server).post(`/v1/admin/markets/${market}/resolve`, { outcome: 'YES' });
      await checkAcked(server, world);
      assert.equal(await server.stop(), 0, 'a clean stop');
      await auditStopped(world.dataDir);
      assert.ok(Date.now() < roundDeadline, `round ${round} took over ${ROUND_TIMEOUT_MS} ms`);
      log(
        `round ${round}: killed after ${afterMs} ms; acked so far ${world.ackedRfqs.length} RFQs, ${world.ackedCredits.length} credits, ${world.ackedEntries} entries, ${world.ackedWithdrawals.length} withdrawals, ${world.ackedDecisions.length} decisions; all found, ledger agrees`,
      );
      if (round < rounds) server = await start(world);
    }
    return {
      rounds,
      ackedRfqs: world.ackedRfqs.length,
      ackedCredits: world.ackedCredits.length,
      ackedEntries: world.ackedEntries,
      ackedWithdrawals: world.ackedWithdrawals.length,
      ackedDecisions: world.ackedDecisions.length,
      killAfterMs,
    };
  } finally {
    await server.kill();
    rmSync(world.dataDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '10' },
      seed: { type: 'string', default: String(Date.now() % 1e9) },
      // The cluster's money on NATS instead of the service (chaos-cluster.ts).
      cluster: { type: 'boolean', default: false },
      // The cluster through its gateway's HTTP, the gateway among the victims (chaos-gateway.ts).
      gateway: { type: 'boolean', default: false },
    },
  });
  const rounds = Number(values.rounds);
  const seed = Number(values.seed);
  if (!Number.isSafeInteger(rounds) || rounds < 1 || rounds > 100 || !Number.isSafeInteger(seed)) {
    throw new Error('usage: npm run chaos -- --rounds <1..100> [--seed <integer>] [--cluster | --gateway]');
  }
  const mode = values.gateway ? ' --gateway' : values.cluster ? ' --cluster' : '';
  const progress = new Progress(`chaos${mode}`, rounds);
  progress.update(0, 'starting');
  const run = values.gateway ? runGatewayChaos : values.cluster ? runClusterChaos : runChaos;
  const report = await run(rounds, seed, (line) => {
    progress.print(line);
    progress.step();
  });
  progress.end();
  console.log(JSON.stringify({ seed, ...report }));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
