// Contest resolution and voiding in batches (contests/settlement.ts, docs/contests.md "Resolution in
// batches"), in process on a real Store in a temp dir: thousands of entries settled a few dozen per
// transaction pay exactly what the rules pay (numbers worked out by hand here, not by the service's
// scoring); a crash between two batches, produced through the real code path, is finished by the next
// start's recover() with every entry settled exactly once; and the event loop turns between every two batches.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ContestsOptions } from '../../src/contests/contests.js';
import { contestEntryRange, entryRef, type ContestRecord, type EntryRecord } from '../../src/records/contests.js';
import { SettlementInterrupted, type SettleProgress } from '../../src/contests/settlement.js';
import { ApiError, isApiError } from '../../src/lib/errors.js';
import { PROTOCOL } from '../../src/records/ledger.js';
import { auditLedger } from '../../src/ledger/audit.js';
import { readAccount } from '../../src/ledger/ledger.js';
import type { MoneyOp, MoneyResult } from '../../src/ledger/money-ops.js';
import { contestConfig, down, type Pick, up } from '../helpers/contests.js';
import {
  type ContestsHarness,
  createMarketsInProcess,
  fundUsersInProcess,
  openContestsHarness,
  seedContestInProcess,
} from '../helpers/contests-in-process.js';
import { putRawRecord, resolveMarketsInStore } from '../helpers/store-writes.js';
import { waitFor } from '../helpers/wait.js';

const BET = 1_000_000;
const CREDIT_MICROS = 10n * BigInt(BET);

const harnesses: ContestsHarness[] = [];
after(async () => {
  for (const h of harnesses) await h.destroy();
});

/** A first "process" whose settlement batches are reported to `progress` (and may "crash" there). */
async function open(options: ContestsOptions = {}): Promise<ContestsHarness> {
  const h = await openContestsHarness(options);
  harnesses.push(h);
  return h;
}

async function reopen(h: ContestsHarness, options: ContestsOptions = {}): Promise<ContestsHarness> {
  const next = await h.reopen(options);
  harnesses[harnesses.indexOf(h)] = next;
  return next;
}

/** What a crash right after a committed batch leaves: the settlement stops there, nothing after runs. */
class SimulatedCrash extends Error {}

function settleOptions(batchEntries: number, progress: SettleProgress[], crashAfterBatch?: number): ContestsOptions {
  return {
    settlement: {
      batchEntries,
      afterBatch: (p) => {
        progress.push(p);
        if (progress.length === crashAfterBatch) throw new SimulatedCrash(`crash after batch ${crashAfterBatch}`);
      },
    },
  };
}

// ---- the two contests, with their expected results worked out by hand ----

/**
 * outcast over three markets that all resolve YES. Entry seq i picks "down" on its first i mod 4 markets:
 * i mod 4 = 0 is clean (3 wins) and wins; 1, 2, 3 lost a pick with 2, 1, 0 wins. With n entries, n/4 win.
 * The pot (n bets + 1_000_123) is split equally among them, rounded down; the remainder micros are paid to
 * nobody and go back to the protocol's available with the pool (contract section 11).
 */
const outcast = {
  picksOf:
    (markets: readonly number[]) =>
    (seq: number): Pick[] =>
      markets.map((m, i) => (i < seq % 4 ? down(m) : up(m))),
  config: (markets: readonly number[], entryCount: number) =>
    contestConfig(markets, {
      game_type: 'outcast',
      winning_split_bps: [],
      protocol_prize_pool_micros: 1_000_123,
      entry_cap: entryCount,
      bet_type: { kind: 'num_bets', value: 3 },
    }),
  /** `shareMicros` and the unpaid `remainder` worked out by hand for each n (the test re-adds them to the pot). */
  expected: (entryCount: number, shareMicros: number, remainder: number) => {
    const winners = entryCount / 4;
    assert.equal(shareMicros * winners + remainder, 1_000_123 + entryCount * BET, 'hand arithmetic');
    assert.ok(remainder < winners, 'hand arithmetic: the remainder is what rounding down leaves');
    return (seq: number) => {
      const lostPicks = seq % 4;
      if (lostPicks > 0) return { payout: 0, rank: 1 + lostPicks * winners };
      return { payout: shareMicros, rank: 1 };
    };
  },
};

/**
 * lineups over three markets that all resolve YES, 600 entries, splits 50/30/20 %, pool 6: pot 600_000_006.
 * seq 0 has 3 wins; seqs 1 and 2 have 2; then odd seqs 1 win (299 entries), even seqs 0 (298).
 * seq 0, 1st place: floor(pot / 2) = 300_000_003. seqs 1 and 2 tie on places 2-3: floor(pot × 1.0) −
 * 300_000_003 = 300_000_003, 150_000_001 each; the odd micro is not paid. Nobody else reaches a paid place.
 * Ranks: 1; 2, 2; 4 for the 1-win group; 4 + 299 = 303 for the 0-win group. The pot less 1 micro is paid.
 */
const lineups = {
  entryCount: 600,
  potMicros: 600_000_006,
  paidMicros: 600_000_005,
  winsOf: (seq: number) => (seq === 0 ? 3 : seq <= 2 ? 2 : seq % 2 === 1 ? 1 : 0),
  picksOf:
    (markets: readonly number[]) =>
    (seq: number): Pick[] =>
      markets.map((m, i) => (i < lineups.winsOf(seq) ? up(m) : down(m))),
  config: (markets: readonly number[]) =>
    contestConfig(markets, {
      winning_split_bps: [5000, 3000, 2000],
      protocol_prize_pool_micros: 6,
      entry_cap: lineups.entryCount,
      bet_type: { kind: 'num_bets', value: 3 },
    }),
  expected: (seq: number) => {
    if (seq === 0) return { payout: 300_000_003, rank: 1 };
    if (seq === 1) return { payout: 150_000_001, rank: 2 };
    if (seq === 2) return { payout: 150_000_001, rank: 2 };
    return { payout: 0, rank: seq % 2 === 1 ? 4 : 303 };
  },
};

/** Three markets, `userCount` funded users, and an outcast contest of `entryCount` entries (outcast.picksOf). */
/**
 * Users whose ids sort as they are numbered. A settlement's batch holds entries in key order, which is the
 * users' id order: with random ids the first batch's dozen users were all one shard's about once in 4,096
 * runs, and a test that fails one shard's part of it had no other shard's part to commit.
 */
const orderedUserIds = (count: number) => Array.from({ length: count }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);

async function seedOutcast(h: ContestsHarness, userCount: number, entryCount: number) {
  const markets = await createMarketsInProcess(h, 3);
  const users = await fundUsersInProcess(h, userCount, CREDIT_MICROS, orderedUserIds(userCount));
  const firstUsersShards = new Set(users.slice(0, 12).map((userId) => h.shards.shardOfUser(userId)));
  assert.ok(firstUsersShards.size > 1, 'the first batch holds users of more than one shard');
  const contestId = await seedContestInProcess(h, outcast.config(markets, entryCount), users, entryCount, outcast.picksOf(markets));
  return { markets, users, contestId };
}

// ---- reading the durable state ----

function entriesOf(h: ContestsHarness, contestId: string): EntryRecord[] {
  const out: EntryRecord[] = [];
  for (const { value } of h.store.db<EntryRecord>('contestEntries').getRange(contestEntryRange(contestId))) out.push(value);
  return out;
}

function contestOf(h: ContestsHarness, contestId: string): ContestRecord {
  const contest = h.store.db<ContestRecord>('contests').get(contestId);
  assert.ok(contest !== undefined);
  return contest;
}

function settledCount(h: ContestsHarness, contestId: string): number {
  return entriesOf(h, contestId).filter((e) => e.settlement !== null).length;
}

/**
 * Every entry settled once, as `expected(seq)` says: a resolution collects its stake into the pot (one
 * 'collect') and pays its prize when it has one (one 'prize'); a void refunds it (one 'release'); no other
 * settling movement; every user's balance is its credit − its stakes + its payouts, nothing
 * reserved. Returns the sum paid.
 */
function assertSettledExactlyOnce(
  h: ContestsHarness,
  contestId: string,
  userIds: readonly string[],
  kind: 'resolve' | 'release',
  expected: (seq: number) => { payout: number; rank: number | null },
): number {
  const entries = entriesOf(h, contestId);
  let paidMicros = 0;
  const payoutsByUser = new Map<string, number>();
  for (const entry of entries) {
    const want = expected(entry.seq);
    assert.ok(entry.settlement !== null, `entry ${entry.seq} is not settled`);
    assert.deepEqual(
      { payout: entry.settlement.payoutMicros, net: entry.settlement.netPayoutMicros, rank: entry.settlement.rank },
      { payout: want.payout, net: want.payout - BET, rank: want.rank },
      `entry seq ${entry.seq}`,
    );
    paidMicros += want.payout;
    payoutsByUser.set(entry.userId, (payoutsByUser.get(entry.userId) ?? 0) + want.payout);
  }
  const refs = new Set(entries.map(entryRef));
  for (const userId of userIds) {
    const movements = h.journalOf(userId).filter((j) => refs.has(j.ref) && j.kind !== 'reserve');
    const mine = entries.filter((e) => e.userId === userId);
    const want = mine.flatMap((e) => (kind === 'release' ? ['release'] : expected(e.seq).payout > 0 ? ['collect', 'prize'] : ['collect']));
    assert.deepEqual(movements.map((j) => j.kind).sort(), want.sort(), `movements of ${userId}`);
    assert.equal(new Set(movements.map((j) => j.ref)).size, mine.length, `movements of every entry of ${userId}`);
    const balance = h.balanceOf(userId);
    assert.equal(balance.reservedMicros, 0n);
    assert.equal(balance.atRiskMicros, 0n);
    const refunds = kind === 'release' ? mine.length * BET : 0;
    assert.equal(balance.availableMicros, CREDIT_MICROS - BigInt(mine.length * BET) + BigInt((payoutsByUser.get(userId) ?? 0) + refunds));
  }
  return paidMicros;
}

/**
 * Fails the first settle_entries (or collect_entries) batch at the edge between the contests and the shards (their answers):
 * either every shard commits its part and the answers are lost (a crash right after the refunds), or shard
 * 0's part fails without running while the others commit. Later batches pass.
 */
function failFirstSettleBatch(
  h: ContestsHarness,
  how: 'after every shard commits' | 'shard 0 fails, the others commit',
  failedOp: 'settle_entries' | 'collect_entries' = 'settle_entries',
  failure: (message: string) => Error = (message) => new SimulatedCrash(message),
): void {
  const moveMoney = h.shards.moveMoney.bind(h.shards);
  // A batch asks all its shards in one synchronous turn (settlement.ts), so the first batch is over for this
  // wrapper at the first microtask after its first call.
  let batches = 0;
  const failing = async <R extends MoneyResult>(shard: number, op: MoneyOp): Promise<R> => {
    if (op.op !== failedOp || batches > 0) return moveMoney<R>(shard, op);
    if (how === 'shard 0 fails, the others commit') {
      if (shard === 0) {
        queueMicrotask(() => batches++);
        throw failure('shard 0 failed its part of the batch');
      }
      return moveMoney<R>(shard, op);
    }
    await moveMoney<R>(shard, op);
    queueMicrotask(() => batches++);
    throw failure('crash after the shards refunded the first batch');
  };
  h.shards.moveMoney = failing;
}

/** Voided: every stake refunded exactly once, the pool back to the protocol, and the ledger check clean. */
function assertVoidedWhole(
  h: ContestsHarness,
  contestId: string,
  users: readonly string[],
  protocolBefore: ReturnType<typeof readAccount>,
): void {
  const contest = contestOf(h, contestId);
  assert.deepEqual([contest.status, contest.paidMicros, contest.settling], ['voided', 0, undefined]);
  assertRefundedExactlyOnce(h, contestId, users, 5);
  assert.deepEqual(readAccount(h.store, PROTOCOL), protocolBefore);
  assert.deepEqual(auditLedger(h.store).differences, []);
}

async function resolveAll(h: ContestsHarness, markets: readonly number[]): Promise<void> {
  for (const m of markets) await h.markets.resolve(m, 'YES');
}

// ---- the tests ----

describe('resolution in batches', () => {
  it('pays exactly what the rules pay in one piece: every payout and rank, the pot, every balance (outcast, 2000 entries, batches of 64)', async () => {
    const progress: SettleProgress[] = [];
    const h = await open(settleOptions(64, progress));
    const protocolBefore = readAccount(h.store, PROTOCOL);
    const { markets, users, contestId } = await seedOutcast(h, 400, 2000);
    await resolveAll(h, markets);

    // pot 2_001_000_123 among 500 winners: 4_002_000 each, and the 123 micros left are paid to nobody.
    const paid = assertSettledExactlyOnce(h, contestId, users, 'resolve', outcast.expected(2000, 4_002_000, 123));
    assert.equal(paid, 2_001_000_000, 'the pot less the remainder is paid');
    // The pool (1_000_123) left the protocol's available; the remainder came back with the pool's close.
    assert.deepEqual(readAccount(h.store, PROTOCOL), { ...protocolBefore, available: protocolBefore.available - 1_000_123n + 123n });
    assert.deepEqual(auditLedger(h.store).differences, []);
    const contest = contestOf(h, contestId);
    assert.equal(contest.status, 'resolved');
    assert.equal(contest.paidMicros, paid);
    assert.equal(contest.settling, undefined);
    // 2000 = 31 × 64 + 16: 32 batches, each settling at most 64, only the last one final.
    assert.deepEqual(
      progress.map((p) => p.settledCount),
      Array.from({ length: 32 }, (_, i) => Math.min(2000, (i + 1) * 64)),
    );
    assert.deepEqual(
      progress.map((p) => p.isFinished),
      Array.from({ length: 32 }, (_, i) => i === 31),
    );
  });

  it('pays exactly what the rules pay in one piece: lineups places, ties and the rounding micro (600 entries, batches of 64)', async () => {
    const progress: SettleProgress[] = [];
    const h = await open(settleOptions(64, progress));
    const protocolBefore = readAccount(h.store, PROTOCOL);
    const markets = await createMarketsInProcess(h, 3);
    const users = await fundUsersInProcess(h, 120, CREDIT_MICROS);
    const contestId = await seedContestInProcess(h, lineups.config(markets), users, lineups.entryCount, lineups.picksOf(markets));
    await resolveAll(h, markets);

    const paid = assertSettledExactlyOnce(h, contestId, users, 'resolve', lineups.expected);
    assert.equal(paid, lineups.paidMicros);
    assert.equal(contestOf(h, contestId).status, 'resolved');
    assert.equal(contestOf(h, contestId).paidMicros, lineups.paidMicros);
    // The pool (6) left the protocol; the unpaid micro of the tie came back.
    assert.deepEqual(readAccount(h.store, PROTOCOL), { ...protocolBefore, available: protocolBefore.available - 6n + 1n });
    assert.equal(progress.length, 10); // 600 = 9 × 64 + 24
  });

  it('turns the event loop between every two batches; a reader never sees "resolved" before every entry is settled', async () => {
    const batchEntries = 50;
    const h = await open(settleOptions(batchEntries, []));
    const { markets, contestId } = await seedOutcast(h, 200, 1000);

    // A reader on every turn of the event loop (setImmediate), for as long as the resolution runs.
    const seen: Array<{ settled: number; status: string }> = [];
    let isResolving = true;
    const observe = () => {
      seen.push({ settled: settledCount(h, contestId), status: h.contests.detail(contestId, null).status });
      if (isResolving) setImmediate(observe);
    };
    await resolveAll(h, markets.slice(0, 2));
    setImmediate(observe);
    await h.markets.resolve(markets[2]!, 'YES');
    isResolving = false;
    await nextTurn();

    assert.equal(seen.at(-1)!.settled, 1000);
    const steps = seen.slice(1).map((s, i) => s.settled - seen[i]!.settled);
    assert.ok(
      steps.every((step) => step >= 0 && step <= batchEntries),
      `at most one batch per turn, saw steps ${steps.filter((s) => s > 0)}`,
    );
    // Every batch boundary was seen by some turn: 1000 / 50 = 20 batches, so 19 boundaries strictly in
    // between (a turn may also see a batch half written: each shard commits its part of it on its own).
    const midway = new Set(seen.filter((s) => s.settled > 0 && s.settled < 1000).map((s) => s.settled));
    for (let boundary = batchEntries; boundary < 1000; boundary += batchEntries)
      assert.ok(midway.has(boundary), `batch boundary ${boundary} seen`);
    // The last batch's entries commit in their shards before this thread writes "resolved": a reader may see
    // all of them settled while the contest still reads open, never the other way round.
    for (const s of seen) if (s.status === 'resolved') assert.equal(s.settled, 1000, 'resolved before every entry was settled');
    for (const s of seen) if (s.settled < 1000) assert.equal(s.status, 'open', `status with ${s.settled} settled`);
    assert.equal(seen.at(-1)!.status, 'resolved');
  });
});

describe('a crash between batches', () => {
  for (const crashAfterBatch of [1, 15]) {
    it(`after batch ${crashAfterBatch} of 16: the state is whole batches, and the next start's recover() settles the rest exactly once`, async () => {
      const progress: SettleProgress[] = [];
      let h = await open(settleOptions(64, progress, crashAfterBatch));
      const markets = await createMarketsInProcess(h, 3);
      const users = await fundUsersInProcess(h, 200, CREDIT_MICROS);
      const contestId = await seedContestInProcess(h, outcast.config(markets, 1000), users, 1000, outcast.picksOf(markets));
      // The "crash" fails the last resolve; the market stays resolved.
      await assert.rejects(resolveAll(h, markets), (err) => err instanceof AggregateError);
      assert.equal(h.markets.get(markets[2]!)!.status, 'RESOLVED');

      // What the crash left in LMDB: exactly the committed batches, the contest still open and marked.
      const settledBefore = crashAfterBatch * 64;
      const midway = contestOf(h, contestId);
      assert.equal(midway.status, 'open');
      assert.equal(midway.paidMicros, null);
      assert.deepEqual(midway.settling && { kind: midway.settling.kind, settledCount: midway.settling.settledCount }, {
        kind: 'resolve',
        settledCount: settledBefore,
      });
      assert.equal(settledCount(h, contestId), settledBefore);
      // Nothing else may change the contest meanwhile: a void is refused once paying has begun.
      await assert.rejects(h.contests.voidContest(contestId), (err) => isApiError(err) && err.code === 'CONTEST_CLOSED');

      h = await reopen(h, settleOptions(64, progress));
      assert.deepEqual(await h.contests.recover(), { open: 0, finished: 1 });

      // pot 1_001_000_123 among 250 winners: 4_004_000 each, and the 123 micros left are paid to nobody.
      const paid = assertSettledExactlyOnce(h, contestId, users, 'resolve', outcast.expected(1000, 4_004_000, 123));
      assert.equal(paid, 1_001_000_000);
      const contest = contestOf(h, contestId);
      assert.equal(contest.status, 'resolved');
      assert.equal(contest.paidMicros, paid);
      // The decision keeps its time across the restart.
      assert.equal(contest.resolvedAtMs, midway.settling!.atMs);
      assert.deepEqual(progress.map((p) => p.settledCount).slice(crashAfterBatch - 1, crashAfterBatch + 1), [
        settledBefore,
        Math.min(1000, settledBefore + 64),
      ]);
    });
  }

  it('a resolution decided before the payout rules were recorded finishes under the former ones: its remainder to the earliest winners', async () => {
    const progress: SettleProgress[] = [];
    let h = await open(settleOptions(64, progress));
    const { markets, users, contestId } = await seedOutcast(h, 200, 1000);
    const protocolBefore = readAccount(h.store, PROTOCOL);
    // What a build of the former rules left when it stopped right after deciding: the decision without
    // `payoutRules`, nothing collected or paid yet (its batches paid by those rules).
    await resolveMarketsInStore(h.store, markets, 'YES');
    const decided = { kind: 'resolve', atMs: Date.now(), phase: 'collect', lastKey: '', settledCount: 0, paidMicros: 0 };
    await putRawRecord(h.store, 'contests', contestId, { ...contestOf(h, contestId), settling: decided });

    h = await reopen(h, settleOptions(64, progress));
    assert.deepEqual(await h.contests.recover(), { open: 0, finished: 1 });
    // pot 1_001_000_123 among 250 winners (seq 0, 4, 8, ...): 4_004_000 each, and the 123 micros left over
    // one each to the 123 earliest of them, as those rules paid.
    const expectedShare = outcast.expected(1000, 4_004_000, 123);
    const formerRules = (seq: number) => {
      const want = expectedShare(seq);
      return want.payout > 0 && seq / 4 < 123 ? { ...want, payout: want.payout + 1 } : want;
    };
    const paid = assertSettledExactlyOnce(h, contestId, users, 'resolve', formerRules);
    assert.equal(paid, 1_001_000_123);
    assert.deepEqual([contestOf(h, contestId).status, contestOf(h, contestId).paidMicros], ['resolved', paid]);
    // The whole pot was paid: the protocol's available gets nothing back, its prize pool is spent.
    assert.equal(readAccount(h.store, PROTOCOL).available, protocolBefore.available);
    assert.deepEqual(auditLedger(h.store).differences, []);
  });

  it('in an admin void: entries are refused meanwhile, and recover() refunds the rest exactly once though markets are still OPEN', async () => {
    const progress: SettleProgress[] = [];
    let h = await open(settleOptions(64, progress, 2));
    const { markets, users, contestId } = await seedOutcast(h, 60, 300);

    await assert.rejects(h.contests.voidContest(contestId), SimulatedCrash);
    assert.equal(settledCount(h, contestId), 128);
    assert.equal(contestOf(h, contestId).settling?.kind, 'void');
    assert.equal(h.contests.detail(contestId, null).status, 'open');
    await assert.rejects(
      h.contests.enter(users[0]!, { contest_id: contestId, bets: outcast.picksOf(markets)(0) }),
      (err) => isApiError(err) && err.code === 'CONTEST_CLOSED',
    );

    h = await reopen(h);
    assert.deepEqual(await h.contests.recover(), { open: 0, finished: 1 });
    assertRefundedExactlyOnce(h, contestId, users, 5);
    const contest = contestOf(h, contestId);
    assert.equal(contest.status, 'voided');
    assert.equal(contest.paidMicros, 0);
    assert.equal(contest.settling, undefined);
  });
});

describe('a settlement cut between its first money movements and its first progress record', () => {
  it('a crash right after the shards refund the first batch: the next start finishes the void, each stake refunded once, and the markets resolving later change nothing', async () => {
    let h = await open({ settlement: { batchEntries: 64 } });
    const protocolBefore = readAccount(h.store, PROTOCOL);
    const { markets, users, contestId } = await seedOutcast(h, 60, 300);
    failFirstSettleBatch(h, 'after every shard commits');

    await assert.rejects(h.contests.voidContest(contestId), SimulatedCrash);
    // What the crash leaves: the first batch refunded, and the decision durable although no batch's progress is.
    assert.equal(settledCount(h, contestId), 64);
    assert.deepEqual(contestOf(h, contestId).settling && { ...contestOf(h, contestId).settling, atMs: 0 }, {
      kind: 'void',
      atMs: 0,
      phase: 'pay',
      lastKey: '',
      settledCount: 0,
      paidMicros: 0,
    });

    h = await reopen(h, { settlement: { batchEntries: 64 } });
    assert.deepEqual(await h.contests.recover(), { open: 0, finished: 1 });
    assertVoidedWhole(h, contestId, users, protocolBefore);
    // Before, the contest stayed open with its refunded entries, and its markets' resolution stopped the
    // process ("entry ... was settled otherwise") at that resolve and at every start after it.
    await resolveAll(h, markets);
    h = await reopen(h);
    assert.deepEqual(await h.contests.recover(), { open: 0, finished: 0 });
    assertVoidedWhole(h, contestId, users, protocolBefore);
  });

  it("one shard's refunds fail while another's commit: the contest stays a void, and its markets' resolution in the same process finishes it", async () => {
    const h = await open({ settlement: { batchEntries: 64 } });
    const protocolBefore = readAccount(h.store, PROTOCOL);
    const { markets, users, contestId } = await seedOutcast(h, 60, 300);
    failFirstSettleBatch(h, 'shard 0 fails, the others commit');

    await assert.rejects(h.contests.voidContest(contestId), SimulatedCrash);
    const refunded = settledCount(h, contestId);
    assert.ok(refunded > 0 && refunded < 64, `one shard's part of the first batch is refunded (${refunded})`);
    assert.equal(contestOf(h, contestId).settling?.kind, 'void');
    await assert.rejects(
      h.contests.enter(users[0]!, { contest_id: contestId, bets: outcast.picksOf(markets)(0) }),
      (err) => isApiError(err) && err.code === 'CONTEST_CLOSED',
    );

    // The markets' resolution continues the void rather than starting a resolution over refunded entries.
    await resolveAll(h, markets);
    assertVoidedWhole(h, contestId, users, protocolBefore);
  });

  it('a void whose batch a full store refuses (503) after another shard committed its part goes on by itself once there is room', async () => {
    const h = await open({ settlement: { batchEntries: 64 } });
    const protocolBefore = readAccount(h.store, PROTOCOL);
    const { users, contestId } = await seedOutcast(h, 60, 300);
    // What a shard's full store answers (store/db.ts: nothing of its transaction written); the next batches pass.
    failFirstSettleBatch(h, 'shard 0 fails, the others commit', 'settle_entries', (message) => new ApiError('OVERLOADED', message));

    await assert.rejects(h.contests.voidContest(contestId), (err) => isApiError(err) && err.code === 'OVERLOADED');
    assert.equal(contestOf(h, contestId).settling?.kind, 'void');
    // No retry from the admin, no market resolved, no restart: the settlement continues after ~1 s.
    await waitFor(() => contestOf(h, contestId).status === 'voided', { what: 'the void continued in the background', timeoutMs: 10_000 });
    assertVoidedWhole(h, contestId, users, protocolBefore);
  });

  it('a resolution cut after its first collect batch is still a resolution: a void is refused, and the same-outcome retry pays each entry once', async () => {
    const h = await open({ settlement: { batchEntries: 64 } });
    const { markets, users, contestId } = await seedOutcast(h, 60, 300);
    failFirstSettleBatch(h, 'after every shard commits', 'collect_entries');
    await h.markets.resolve(markets[0]!, 'YES');
    await h.markets.resolve(markets[1]!, 'YES');
    await assert.rejects(h.markets.resolve(markets[2]!, 'YES'), (err) => leafErrors(err).some((e) => e instanceof SimulatedCrash));
    assert.equal(contestOf(h, contestId).settling?.kind, 'resolve');
    // Before, nothing said the contest was resolving: the void went ahead and met stakes already in the pot.
    await assert.rejects(h.contests.voidContest(contestId), (err) => isApiError(err) && err.code === 'CONTEST_CLOSED');

    await h.markets.resolve(markets[2]!, 'YES');
    // 300 entries, 75 winners: pot 301_000_123 → 4_013_334 each, 73 micros left unpaid.
    assert.equal(assertSettledExactlyOnce(h, contestId, users, 'resolve', outcast.expected(300, 4_013_334, 73)), 301_000_050);
    assert.equal(contestOf(h, contestId).status, 'resolved');
    assert.deepEqual(auditLedger(h.store).differences, []);
  });

  it('a void an earlier version cut before it wrote any progress (no settling record) is finished as a void at start', async () => {
    let h = await open({ settlement: { batchEntries: 64 } });
    const protocolBefore = readAccount(h.store, PROTOCOL);
    const { markets, users, contestId } = await seedOutcast(h, 60, 300);
    failFirstSettleBatch(h, 'after every shard commits');
    await assert.rejects(h.contests.voidContest(contestId), SimulatedCrash);
    // That version wrote the decision with the first batch's progress: a crash before it left no trace of it.
    const { settling: _decision, ...undecided } = contestOf(h, contestId);
    await putRawRecord(h.store, 'contests', contestId, undecided);
    await resolveMarketsInStore(h.store, markets, 'YES');

    h = await reopen(h, { settlement: { batchEntries: 64 } });
    assert.deepEqual(await h.contests.recover(), { open: 0, finished: 1 });
    assertVoidedWhole(h, contestId, users, protocolBefore);
  });
});

describe('a settlement that stops midway in a running process', () => {
  it('a batch that fails at run time fails the resolve; the same-outcome retry continues from the last batch and settles each entry once', async () => {
    const progress: SettleProgress[] = [];
    const h = await open(settleOptions(64, progress, 3));
    const { markets, users, contestId } = await seedOutcast(h, 200, 1000);
    await h.markets.resolve(markets[0]!, 'YES');
    await h.markets.resolve(markets[1]!, 'YES');
    // Without the failure reaching the resolve, the admin would see 200 with the contest a third paid.
    await assert.rejects(h.markets.resolve(markets[2]!, 'YES'), (err) => leafErrors(err).some((e) => e instanceof SimulatedCrash));
    assert.equal(contestOf(h, contestId).settling?.settledCount, 3 * 64);

    await h.markets.resolve(markets[2]!, 'YES');
    const paid = assertSettledExactlyOnce(h, contestId, users, 'resolve', outcast.expected(1000, 4_004_000, 123));
    assert.equal(contestOf(h, contestId).status, 'resolved');
    assert.equal(paid, 1_001_000_000);
    // The retry went on from batch 4: 16 batches in all, none repeated.
    assert.deepEqual(
      progress.map((p) => p.settledCount),
      Array.from({ length: 16 }, (_, i) => Math.min(1000, (i + 1) * 64)),
    );
  });

  it('retried resolves during a settlement queue one finish, not one each: an entry still gets CONTEST_CLOSED, not OVERLOADED', async () => {
    let retries: Promise<unknown>[] = [];
    let entry: Promise<unknown> | null = null;
    const progress: SettleProgress[] = [];
    const h = await open({
      settlement: {
        batchEntries: 64,
        afterBatch: (p) => {
          progress.push(p);
          // While the settlement holds the lane, an oracle retries more times than a lane holds tasks
          // (MAX_QUEUED_TASKS_PER_CONTEST, 4,096).
          if (progress.length === 1) retries = Array.from({ length: 5000 }, () => h.markets.resolve(markets[2]!, 'YES'));
          // The retries' writes were queued before the next batch's, so by now each retry has asked for a finish.
          if (progress.length === 2) entry = h.contests.enter(extra!, { contest_id: contestId, bets: outcast.picksOf(markets)(0) });
        },
      },
    });
    const { markets, contestId } = await seedOutcast(h, 50, 200);
    const [extra] = await fundUsersInProcess(h, 1, CREDIT_MICROS);
    await h.markets.resolve(markets[0]!, 'YES');
    await h.markets.resolve(markets[1]!, 'YES');
    await h.markets.resolve(markets[2]!, 'YES');
    await Promise.all(retries);
    assert.ok(entry !== null);
    // With a lane task per retry, the entry would have found the lane full: 503 OVERLOADED.
    await assert.rejects(entry, (err) => isApiError(err) && err.code === 'CONTEST_CLOSED');
    assert.equal(contestOf(h, contestId).status, 'resolved');
    assert.equal(progress.length, 4); // 200 entries in batches of 64, each settled once
  });

  it('a stop ends the settlement after its current batch, before the store closes; the next start finishes it', async () => {
    const progress: SettleProgress[] = [];
    let stopping: Promise<void> | null = null;
    let h = await open({
      settlement: {
        batchEntries: 64,
        afterBatch: (p) => {
          progress.push(p);
          if (progress.length === 2) stopping = h.contests.stop();
        },
      },
    });
    const { markets, users, contestId } = await seedOutcast(h, 200, 1000);
    await h.markets.resolve(markets[0]!, 'YES');
    await h.markets.resolve(markets[1]!, 'YES');
    await assert.rejects(h.markets.resolve(markets[2]!, 'YES'), (err) => err instanceof AggregateError);
    await stopping; // every lane has ended: the store can close
    assert.equal(progress.length, 2);
    assert.equal(contestOf(h, contestId).settling?.settledCount, 128);

    h = await reopen(h);
    assert.deepEqual(await h.contests.recover(), { open: 0, finished: 1 });
    assertSettledExactlyOnce(h, contestId, users, 'resolve', outcast.expected(1000, 4_004_000, 123));
  });
});

describe('a stop before a settlement starts', () => {
  it('a settlement due after the stop began does not start: nothing is settled, the resolve fails, and the next start settles it all', async () => {
    const progress: SettleProgress[] = [];
    let h = await open(settleOptions(64, progress));
    const { markets, users, contestId } = await seedOutcast(h, 50, 200);
    await h.markets.resolve(markets[0]!, 'YES');
    await h.markets.resolve(markets[1]!, 'YES');
    await h.contests.stop();
    // A resolve that reaches the contests during a stop: the stop does not wait for a settlement to begin.
    await assert.rejects(h.markets.resolve(markets[2]!, 'YES'), (err) => leafErrors(err).some((e) => e instanceof SettlementInterrupted));
    assert.equal(progress.length, 0);
    assert.equal(settledCount(h, contestId), 0);

    h = await reopen(h);
    assert.deepEqual(await h.contests.recover(), { open: 0, finished: 1 });
    // 200 entries, 50 winners: pot 201_000_123 → 4_020_002 each, 23 micros left unpaid.
    assert.equal(assertSettledExactlyOnce(h, contestId, users, 'resolve', outcast.expected(200, 4_020_002, 23)), 201_000_100);
  });
});

describe('recovery at start', () => {
  it('queues every due finish before it yields, so a void sent at once finds each contest resolved, not voided', async () => {
    let h = await open();
    const markets = await createMarketsInProcess(h, 3);
    const users = await fundUsersInProcess(h, 20, CREDIT_MICROS);
    const contestIds = [
      await seedContestInProcess(h, outcast.config(markets, 40), users, 40, outcast.picksOf(markets)),
      await seedContestInProcess(h, outcast.config(markets, 40), users, 40, outcast.picksOf(markets)),
    ];
    // What a crash leaves between the markets' durable resolution and the contests': markets final, contests open.
    await resolveMarketsInStore(h.store, markets, 'YES');
    h = await reopen(h);

    // The service does not wait for recover() before serving: an operator's void may come at once.
    const recovering = h.contests.recover();
    const voids = contestIds.map((contestId) => h.contests.voidContest(contestId));
    for (const attempt of voids) await assert.rejects(attempt, (err) => isApiError(err) && err.code === 'CONTEST_CLOSED');
    assert.deepEqual(await recovering, { open: 0, finished: 2 });
    for (const contestId of contestIds) {
      assert.equal(contestOf(h, contestId).status, 'resolved');
      // 40 entries, 10 winners: pot 41_000_123 → 4_100_012 each, 3 micros left unpaid.
      assert.equal(contestOf(h, contestId).paidMicros, 41_000_120);
    }
  });
});

/**
 * The errors inside nested AggregateErrors (markets/resolution.ts wraps its listeners' failures, contests.ts its
 * contests').
 */
function leafErrors(err: unknown): unknown[] {
  return err instanceof AggregateError ? err.errors.flatMap(leafErrors) : [err];
}

/**
 * A refund (contract section 8, docs/contests.md "Voiding"): every pick voided, payout = the stake, net 0, no
 * rank; one release per entry and nothing else; each user's balance is back to its credit, nothing reserved.
 */
function assertRefundedExactlyOnce(h: ContestsHarness, contestId: string, userIds: readonly string[], entriesPerUser: number): void {
  const entries = entriesOf(h, contestId);
  for (const e of entries) {
    assert.deepEqual(e.settlement, { outcomes: ['voided', 'voided', 'voided'], payoutMicros: BET, netPayoutMicros: 0, rank: null });
  }
  const refs = new Set(entries.map(entryRef));
  for (const userId of userIds) {
    const movements = h.journalOf(userId).filter((j) => refs.has(j.ref) && j.kind !== 'reserve');
    assert.deepEqual(
      movements.map((j) => j.kind),
      Array.from({ length: entriesPerUser }, () => 'release'),
      `refunds of ${userId}`,
    );
    assert.equal(new Set(movements.map((j) => j.ref)).size, entriesPerUser, `one refund per entry of ${userId}`);
    const balance = h.balanceOf(userId);
    assert.deepEqual([balance.availableMicros, balance.reservedMicros], [CREDIT_MICROS, 0n]);
  }
}
