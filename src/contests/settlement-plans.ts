// Main thread, on the contest's lane, called by settlement.ts before it moves any money: what a settlement
// does to each entry. A void refunds every stake. A resolution pays by score, and a score depends on every
// other entry (ranks, ties, the split of the pot), so it first reads the contest's entries page by page,
// yielding between pages, and keeps one score key per entry (scoring.ts, ScoreTable): one byte per entry
// instead of every record at once, up to entry_cap = 1,000,000. The plan is then pure: the batches of
// settlement.ts ask it about one entry at a time, in any order and as often as a crash makes them.
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Market } from '../contract/markets.js';
import type { ContestRecords } from './contest-records.js';
import { entryRef, type ContestRecord, type EntryRecord, type EntrySettlement, type SettlingRecord } from '../records/contests.js';
import { buildScoreTable, scoreKey, type ScoreTable } from './scoring.js';
import { entryOutcomes, totalPotMicros } from './views.js';
import type { MarketOf } from '../contract/markets.js';

/**
 * Entries read per event-loop turn while scoring: reads only, ~1.3 µs each, so ~2.5 ms a page once warm. The
 * first pages run cold (JIT, LMDB pages not yet mapped in: 17-24 ms measured for the first 2,048), so a page
 * also ends once it has taken SCORE_PAGE_BUDGET_MS.
 */
export const SCORE_PAGE_ENTRIES = 2048;
export const SCORE_PAGE_BUDGET_MS = 4;
/** Entries read between two looks at the clock within a scoring page. */
const CLOCK_CHECK_ENTRIES = 64;

export type SettlementKind = SettlingRecord['kind'];

/** What one settlement does to each entry: the settlement it writes and the money it moves. */
export interface SettlementPlan {
  kind: SettlementKind;
  /** What the whole contest pays: the last batch asserts that exactly this was paid. */
  totalPaidMicros: bigint;
  /** Pure. The entry's settlement, what it counts as paid (0n for a refund) and its payout (null: refund the stake). */
  settleEntry(entry: EntryRecord): { settlement: EntrySettlement; paidMicros: bigint; payoutMicros: bigint | null };
}

export function voidPlan(): SettlementPlan {
  return {
    kind: 'void',
    totalPaidMicros: 0n,
    settleEntry: (entry) => {
      const settlement = {
        outcomes: entry.picks.map(() => 'voided' as const),
        payoutMicros: entry.stakeMicros,
        netPayoutMicros: 0,
        rank: null,
      };
      return { settlement, paidMicros: 0n, payoutMicros: null };
    },
  };
}

/**
 * Scores every entry of `contest` (its markets all final) and returns the plan that pays by those scores.
 * `throwIfStopping` is asked between pages: a stop waits for one page at most.
 */
export async function resolvePlan(
  contest: ContestRecord,
  records: ContestRecords,
  marketOf: MarketOf,
  throwIfStopping: () => void,
): Promise<SettlementPlan> {
  const finalMarketOf = finalMarkets(contest, marketOf);
  const table = buildScoreTable(
    {
      gameType: contest.gameType,
      winningSplitBps: contest.winningSplitBps,
      potMicros: BigInt(totalPotMicros(contest)),
      // A settlement decided before the rules were recorded ran, and so goes on, under the former ones.
      payoutRules: contest.settling?.payoutRules ?? 'earliest_entries',
    },
    await readScoreKeys(contest, records, finalMarketOf, throwIfStopping),
  );
  return {
    kind: 'resolve',
    totalPaidMicros: table.paidMicros,
    settleEntry: (entry) => resolveEntry(contest, table, finalMarketOf, entry),
  };
}

/** One score key per entry, indexed by seq. Page by page, with a turn of the event loop between pages. */
async function readScoreKeys(
  contest: ContestRecord,
  records: ContestRecords,
  marketOf: MarketOf,
  throwIfStopping: () => void,
): Promise<Uint8Array> {
  const entryCount = contest.entriesFilled;
  const keysBySeq = new Uint8Array(entryCount);
  const isSeen = new Uint8Array(entryCount);
  let readCount = 0;
  const scoreEntry = (entry: EntryRecord) => {
    // seq is the entry's position in entry order, so the seqs are exactly 0..entriesFilled-1.
    assert.ok(entry.seq < entryCount && isSeen[entry.seq] === 0, `entry seq ${entry.seq} out of range or repeated`);
    isSeen[entry.seq] = 1;
    const outcomes = entryOutcomes(entry, marketOf);
    assert.ok(!outcomes.includes('pending'), 'scoring needs every pick final');
    keysBySeq[entry.seq] = scoreKey(contest.gameType, outcomes);
    readCount++;
  };
  let page = scorePage(records, contest.contestId, null, scoreEntry);
  while (!page.isEnd) {
    await nextTurn();
    throwIfStopping();
    page = scorePage(records, contest.contestId, page.lastKey, scoreEntry);
  }
  assert.equal(readCount, entryCount, `contest ${contest.contestId} entry count drifted`);
  return keysBySeq;
}

/**
 * Visits the entries after `afterKey` in key order, up to SCORE_PAGE_ENTRIES of them and for at most about
 * SCORE_PAGE_BUDGET_MS. `isEnd` when the contest's last entry was visited.
 */
function scorePage(
  records: ContestRecords,
  contestId: string,
  afterKey: string | null,
  visit: (entry: EntryRecord) => void,
): { lastKey: string | null; isEnd: boolean } {
  const deadlineMs = performance.now() + SCORE_PAGE_BUDGET_MS;
  let lastKey = afterKey;
  let visited = 0;
  for (const { key, value } of records.entriesAfter(contestId, afterKey)) {
    visit(value);
    lastKey = key;
    visited++;
    const isPageFull = visited === SCORE_PAGE_ENTRIES || (visited % CLOCK_CHECK_ENTRIES === 0 && performance.now() > deadlineMs);
    if (isPageFull) return { lastKey, isEnd: false };
  }
  return { lastKey, isEnd: true };
}

/** Pure. An entry of a resolving contest, as its scores say; the entry must be the one that was scored. */
function resolveEntry(contest: ContestRecord, table: ScoreTable, marketOf: MarketOf, entry: EntryRecord) {
  const outcomes = entryOutcomes(entry, marketOf);
  assert.equal(scoreKey(contest.gameType, outcomes), table.keyOf(entry.seq), `entry ${entryRef(entry)} changed after scoring`);
  const { rank, payoutMicros } = table.scoreOf(entry.seq);
  const payout = Number(payoutMicros);
  return {
    settlement: { outcomes, payoutMicros: payout, netPayoutMicros: payout - entry.stakeMicros, rank },
    paidMicros: payoutMicros,
    payoutMicros,
  };
}

/**
 * The contest's markets, read once: they are final (a market never changes after it resolves), so reading
 * each pick's market from LMDB again (~0.2 µs a pick, millions of times at 1,000,000 entries) buys nothing.
 */
function finalMarkets(contest: ContestRecord, marketOf: MarketOf): MarketOf {
  const markets = new Map<number, Market>();
  for (const { marketId } of contest.markets) {
    const market = marketOf(marketId);
    assert.ok(market !== undefined && market.status !== 'OPEN', `market ${marketId} of contest ${contest.contestId} is not final`);
    markets.set(marketId, market);
  }
  return (marketId) => markets.get(marketId);
}
