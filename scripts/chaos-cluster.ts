// `npm run chaos -- --cluster --rounds N [--seed N]`: the chaos run of the cluster's money. A real nats-server
// and two owner nodes (src/cluster/shard-node-main.ts: node a with owners 0 and 64 on two threads, node b with
// owner 128, each owner its own journal and LMDB); per round a seeded mixed load through NATS (credits to
// takers and makers of every owner, RFQs reserved and filled against makers on any owner, so most fills lock
// across owners, settlements of earlier positions, withdrawals asked and ended), and at a seeded moment a
// SIGKILL of one node or of nats-server (each in turn), which is then started again. Once every owner is quiet
// it checks every acknowledged write: each acked credit key replays without crediting again, each acked fill
// is a position on both sides (its maker's lock posted) until its acked settlement ends it, each acked
// withdrawal is held until its acked end; and the cluster's ledger check through NATS is clean with nothing
// in transit. After the last round both nodes stop and every owner's journal is checked with the others' to
// the micro.
//
// Its load is money calls, not RFQs through a gateway: a gateway's kill is tested in
// test/cluster/rfq-over-nats.test.ts, and joins this mix with the coordinator (docs/scaling.md).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect, type NatsConnection } from 'nats';
import { MoneyCalls, type MoneyReply } from '../src/cluster/money-calls.js';
import { natsOptions } from '../src/cluster/nats-options.js';
import { partitionOfName, partitionOfUser } from '../src/cluster/partitions.js';
import type { MoneyCall } from '../src/ledger/money-ops.js';
import { creditRef, lockRef, makerAccount, userAccount, type PositionOutcome } from '../src/records/ledger.js';
import { NatsServer, natsServerBinary } from '../test/helpers/nats-server.js';
import {
  A,
  A2,
  assertClusterCheckClean,
  assertJournalsClean,
  B,
  look,
  makerOn,
  MAP,
  NodeProcess,
  NODES,
  userOn,
  waitForQuiet,
} from '../test/helpers/owner-nodes.js';
import { int, pick, prng, type Rng } from './fuzz/gen.js';

const TAKERS_PER_OWNER = 2;
const FUNDING_MICROS = 10n ** 9n;
const WAGER_MICROS = 1_000n;
const LIABILITY_MICROS = 1_500n;
/** Requests of each kind per round: enough to be in flight when the kill comes, few enough for 2 cores. */
const RFQS_PER_ROUND = 40;
const CREDITS_PER_ROUND = 12;
const SETTLES_PER_ROUND = 8;
const WITHDRAWALS_PER_ROUND = 4;
const FINISHES_PER_ROUND = 3;
/** The load's requests start over this long; the kill comes within it. */
const SPREAD_MS = 300;
const KILL_MIN_MS = 20;
const KILL_MAX_MS = 300;
const CALL_TIMEOUT_MS = 3_000;
/** Calls are sent again this often until answered: a kill's lost requests and answers are resent, at least once. */
const CALL_RESEND_MS = 100;
const ROUND_TIMEOUT_MS = 60_000;

const VICTIMS = ['node a', 'node b', 'nats-server'] as const;
type Victim = (typeof VICTIMS)[number];

export interface ClusterChaosReport {
  rounds: number;
  victims: Victim[];
  killAfterMs: number[];
  ackedCredits: number;
  ackedFills: number;
  ackedSettles: number;
  ackedWithdrawals: number;
  ackedFinishes: number;
  /** Fills answered UNAVAILABLE (their node or the server died with the answer): committed or not, as the journal says. */
  unknownFills: number;
}

interface Position {
  taker: string;
  maker: string;
  ref: string;
}

interface World {
  takers: string[];
  makers: string[];
  acked: {
    credits: Array<{ account: string; amountMicros: bigint; key: string }>;
    positions: Position[];
    settled: Set<string>;
    withdrawals: Array<{ account: string; ref: string }>;
    finished: Set<string>;
  };
  unknownFills: Set<string>;
  /** Settlements answered UNAVAILABLE (their node died with the answer): applied or not, as the journal says. */
  unknownSettles: Set<string>;
  /** Withdrawals acked and not yet given an end (one cut off by a kill may have ended: not asked again). */
  unfinished: Array<{ account: string; ref: string }>;
  /** Positions acked and not yet settled (nor asked to be). */
  open: Position[];
  nextId: number;
}

export async function runClusterChaos(
  rounds: number,
  seed: number,
  log: (line: string) => void = () => undefined,
): Promise<ClusterChaosReport> {
  const rng = prng(seed);
  const cluster = await openChaosCluster('parlayd-chaos-cluster-');
  const { nats, nc, nodes } = cluster;
  const money = new MoneyCalls(nc, { deadlineMs: CALL_TIMEOUT_MS, resendMs: CALL_RESEND_MS });
  const world: World = {
    takers: MAP.owners.flatMap((owner) => Array.from({ length: TAKERS_PER_OWNER }, (_, i) => userOn(owner, `chaos-${owner}-${i}`))),
    makers: [makerOn(A), makerOn(A2), makerOn(B)],
    acked: { credits: [], positions: [], settled: new Set(), withdrawals: [], finished: new Set() },
    unknownFills: new Set(),
    unknownSettles: new Set(),
    unfinished: [],
    open: [],
    nextId: 1,
  };
  const victims: Victim[] = [];
  const killAfterMs: number[] = [];
  try {
    await Promise.all(nodes.map((node) => node.start()));
    for (const account of [...world.takers.map(userAccount), ...world.makers.map(makerAccount)]) {
      const key = `fund-${account}`;
      const funded = await money.call(partitionOfName(creditRef(key)), { op: 'credit', account, amountMicros: FUNDING_MICROS, key });
      assert.equal(funded.ok, true, `funding ${account}`);
      world.acked.credits.push({ account, amountMicros: FUNDING_MICROS, key });
    }
    await waitForQuiet(nc);
    // Each kind of victim in turn from a seeded first, so any three rounds kill each once.
    const firstVictim = int(rng, VICTIMS.length);
    for (let round = 1; round <= rounds; round++) {
      const deadline = Date.now() + ROUND_TIMEOUT_MS;
      const victim = VICTIMS[(firstVictim + round) % VICTIMS.length]!;
      const afterMs = KILL_MIN_MS + int(rng, KILL_MAX_MS - KILL_MIN_MS);
      victims.push(victim);
      killAfterMs.push(afterMs);
      const load = startLoad(money, world, rng);
      await sleep(afterMs);
      if (victim === 'nats-server') await nats.restart();
      else {
        const node = nodes.find(({ node }) => node.name === victim)!;
        await node.kill();
        await load; // everything the dead node was asked is answered (UNAVAILABLE) or lost before it returns
        await node.start();
      }
      await load;
      await waitForQuiet(nc, 30_000);
      await checkAcked(nc, money, world);
      await assertClusterCheckClean(nc);
      assert.ok(Date.now() < deadline, `round ${round} took over ${ROUND_TIMEOUT_MS} ms`);
      log(
        `round ${round}: ${victim} killed after ${afterMs} ms; acked so far ${world.acked.credits.length} credits, ${world.acked.positions.length} fills, ${world.acked.settled.size} settlements, ${world.acked.withdrawals.length} withdrawals, ${world.acked.finished.size} ends; all found, the cluster's check clean`,
      );
    }
    await Promise.all(nodes.map((node) => node.stop()));
    assertJournalsClean(nodes);
    return {
      rounds,
      victims,
      killAfterMs,
      ackedCredits: world.acked.credits.length,
      ackedFills: world.acked.positions.length,
      ackedSettles: world.acked.settled.size,
      ackedWithdrawals: world.acked.withdrawals.length,
      ackedFinishes: world.acked.finished.size,
      unknownFills: world.unknownFills.size,
    };
  } finally {
    await cluster.close();
  }
}

/** A chaos run's cluster: a nats-server of its own, a connection to it, and the two shard nodes (not started). */
export interface ChaosCluster {
  /** The temp directory the nodes' data directories are in, and anything else of the run's. */
  root: string;
  nats: NatsServer;
  nc: NatsConnection;
  nodes: NodeProcess[];
  /** Kills what is left, stops the server, removes the directory. */
  close(): Promise<void>;
}

/** `nodesTakeMap`: the nodes are given no partition map and take the coordinator's (a run with one). */
export async function openChaosCluster(prefix: string, nodesTakeMap = false): Promise<ChaosCluster> {
  const binary = natsServerBinary();
  if ('missing' in binary) throw new Error(binary.missing);
  const root = mkdtempSync(join(tmpdir(), prefix));
  const nats = await NatsServer.start(binary.path);
  const map = nodesTakeMap ? null : undefined;
  const nodes = NODES.map((node) => new NodeProcess(node, join(root, node.name.replace(' ', '-')), nats.url, {}, map));
  const nc = await connect({ servers: nats.url, ...natsOptions('chaos') });
  return {
    root,
    nats,
    nc,
    nodes,
    close: async () => {
      await nc.close().catch(() => undefined);
      await Promise.allSettled(nodes.map((node) => node.kill()));
      await nats.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** One round's calls, each started at a seeded moment of the spread; resolves once every one is answered. */
function startLoad(money: MoneyCalls, world: World, rng: Rng): Promise<unknown> {
  const jobs: Array<Promise<unknown>> = [];
  const later = (job: () => Promise<unknown>) => jobs.push(sleep(int(rng, SPREAD_MS)).then(job));
  const userCall = (userId: string, call: MoneyCall): Promise<MoneyReply> => money.call(partitionOfUser(userId), call);
  for (let i = 0; i < CREDITS_PER_ROUND; i++) {
    const account = int(rng, 3) === 0 ? makerAccount(pick(rng, world.makers)) : userAccount(pick(rng, world.takers));
    const credit = { account, amountMicros: BigInt(1 + int(rng, 1_000_000)), key: `chaos-${world.nextId++}` };
    later(async () => {
      const answer = await money.call(partitionOfName(creditRef(credit.key)), { op: 'credit', ...credit });
      if (answer.ok) world.acked.credits.push(credit);
    });
  }
  for (let i = 0; i < RFQS_PER_ROUND; i++) {
    const position = { taker: pick(rng, world.takers), maker: pick(rng, world.makers), ref: `rfq:chaos-${world.nextId++}` };
    later(async () => {
      const reserved = await userCall(position.taker, {
        op: 'reserve',
        userId: position.taker,
        amountMicros: WAGER_MICROS,
        ref: position.ref,
      });
      if (!reserved.ok) return;
      const fill = await userCall(position.taker, {
        op: 'fill',
        ref: position.ref,
        filledMicros: WAGER_MICROS,
        makerAddress: position.maker,
        liabilityMicros: LIABILITY_MICROS,
      });
      if (fill.ok) {
        world.acked.positions.push(position);
        world.open.push(position);
      } else if (fill.code === 'UNAVAILABLE') world.unknownFills.add(position.ref);
      else await userCall(position.taker, { op: 'release', ref: position.ref }); // the RFQ ends unfilled, as it would
    });
  }
  for (const position of world.open.splice(0, SETTLES_PER_ROUND)) {
    const outcome = pick(rng, ['won', 'lost', 'voided'] as const satisfies readonly PositionOutcome[]);
    later(async () => {
      const settled = await userCall(position.taker, { op: 'settle', ref: position.ref, makerAddress: position.maker, outcome });
      if (settled.ok) world.acked.settled.add(position.ref);
      else if (settled.code === 'UNAVAILABLE') world.unknownSettles.add(position.ref);
    });
  }
  for (let i = 0; i < WITHDRAWALS_PER_ROUND; i++) {
    const withdrawal = { account: userAccount(pick(rng, world.takers)), ref: `withdrawal:chaos-${world.nextId++}` };
    const userId = withdrawal.account.slice('user:'.length);
    later(async () => {
      const asked = await userCall(userId, {
        op: 'withdraw',
        account: withdrawal.account,
        amountMicros: WAGER_MICROS,
        ref: withdrawal.ref,
      });
      if (!asked.ok) return;
      world.acked.withdrawals.push(withdrawal);
      world.unfinished.push(withdrawal);
    });
  }
  for (const withdrawal of world.unfinished.splice(0, FINISHES_PER_ROUND)) {
    const isCompleted = int(rng, 2) === 0;
    later(async () => {
      const ended = await userCall(withdrawal.account.slice('user:'.length), { op: 'finish_withdrawal', ref: withdrawal.ref, isCompleted });
      if (ended.ok) world.acked.finished.add(withdrawal.ref);
    });
  }
  return Promise.all(jobs);
}

async function checkAcked(nc: Parameters<typeof look>[0], money: MoneyCalls, world: World): Promise<void> {
  const books = new Map(await Promise.all(MAP.owners.map(async (owner) => [owner, await look(nc, owner)] as const)));
  const bookOf = (account: string) => books.get(MAP.ownerOf(account))!;
  for (const { taker, maker, ref } of world.acked.positions) {
    const isSettled = world.acked.settled.has(ref);
    const takerSide = bookOf(userAccount(taker)).holds[ref];
    const makerSide = bookOf(makerAccount(maker)).holds[lockRef(ref)];
    if (isSettled) assert.ok(takerSide === undefined && makerSide === undefined, `${ref}: settled (acked), nothing held`);
    else if (world.unknownSettles.has(ref)) {
      // Its answer was lost with a node: settled on both sides, or on neither with the lock still posted.
      if (takerSide === undefined) assert.equal(makerSide, undefined, `${ref}: settled (answer lost), the maker's lock gone too`);
      else assert.equal(makerSide?.isPending, false, `${ref}: not settled (answer lost), the maker's lock posted`);
    } else if (!world.unknownFills.has(ref)) {
      assert.ok(takerSide !== undefined, `${ref}: acked fill, the taker's stake held`);
      assert.equal(makerSide?.isPending, false, `${ref}: acked fill, the maker's lock posted`);
    }
  }
  for (const { account, ref } of world.acked.withdrawals) {
    const held = bookOf(account).holds[ref];
    if (world.acked.finished.has(ref)) assert.equal(held, undefined, `${ref}: ended (acked), no longer held`);
    else if (world.unfinished.some((withdrawal) => withdrawal.ref === ref))
      assert.ok(held !== undefined, `${ref}: acked, held until its end`);
  }
  const accountsBefore = JSON.stringify([...books.values()].map((book) => book.accounts));
  for (const { account, amountMicros, key } of world.acked.credits) {
    const replay = await money.call(partitionOfName(creditRef(key)), { op: 'credit', account, amountMicros, key });
    assert.deepEqual(replay, { ok: true, isReplay: true }, `acked credit ${key} replays`);
  }
  await waitForQuiet(nc);
  const after = await Promise.all(MAP.owners.map((owner) => look(nc, owner)));
  assert.equal(JSON.stringify(after.map((book) => book.accounts)), accountsBefore, 'replaying acked credits credits nothing');
}
