// Pure resolution of a contest (contract section 8): ranks and payouts from the entries' pick outcomes.
// No store, no clock; settlement.ts applies the result in batches. Amounts are BigInt micros.
//
// Rounding (docs/contests.md): every share is rounded down. A group of winners that shares an amount gets
// floor(amount / n) each, and the `amount mod n` micros left over are not paid: contract section 11 returns
// rounding to the protocol's available. A lineups group covering places [start, end) shares
// floor(pot × Σbps[start..end) / 10000), its places' own share of the pot (section 8), so places of equal bps
// pay alike and a lower place never more than a higher one. The sum paid therefore never exceeds the pot
// (asserted); what is not paid (rounding, unused split places, Σbps < 10000, no winner, a contest nobody
// entered) goes back to the protocol's available when settlement.ts closes the contest's pool.
import assert from 'node:assert/strict';
import { CONTEST_LIMITS, type GameType, type PickOutcome } from '../contract/contests.js';

export interface ScoringEntry {
  /** Entry order in the contest, unique: where the entry sits in the table's one byte per entry. */
  seq: number;
  outcomes: readonly PickOutcome[];
}

export interface EntryScore {
  /** Competition ranking ("1224"): 1 + the number of entries strictly better. */
  rank: number;
  payoutMicros: bigint;
}

/**
 * Which payout rules a settlement runs under, fixed when it is decided (records.ts SettlingRecord) so that
 * its batches before and after a restart pay by one table. 'by_place', the contract's (sections 8 and 11): a
 * lineups group shares its places' own floored share of the pot, a group's rounding is not paid, and survivor
 * with no survivor pays nobody; what is not paid returns to the protocol. The rules of settlements decided by
 * earlier builds: 'to_protocol', as 'by_place' but lineups place amounts as cumulative floors
 * (floor(pot × Σbps[0..end) / 10000) − floor(pot × Σbps[0..start) / 10000), which can pay a lower place a
 * micro more than a higher one); 'earliest_entries', as 'to_protocol' but a group's remainder micros go one
 * each to its earliest entries, and survivor with no survivor pays the entries with the most wins.
 */
export type PayoutRules = 'by_place' | 'to_protocol' | 'earliest_entries';

export interface ContestScoring {
  gameType: GameType;
  winningSplitBps: readonly number[];
  potMicros: bigint;
  /** 'by_place' unless given. */
  payoutRules?: PayoutRules;
}

const BPS = 10_000n;
/**
 * The score key of a clean outcast/survivor entry: above any win count or run, which are at most the 64
 * picks an entry can hold. Every key is then an integer in 0..65, so keys fit a Uint8Array (ScoreTable).
 */
const CLEAN_KEY = CONTEST_LIMITS.maxMarkets + 1;
export const MAX_SCORE_KEY = CLEAN_KEY;

export function countOutcomes(outcomes: readonly PickOutcome[]): { won: number; lost: number; pending: number } {
  let won = 0;
  let lost = 0;
  let pending = 0;
  for (const o of outcomes) {
    if (o === 'won') won++;
    else if (o === 'lost') lost++;
    else if (o === 'pending') pending++;
  }
  return { won, lost, pending };
}

/** Longest run of consecutive wins in pick order; a voided pick neither extends nor breaks a run. */
export function longestWinRun(outcomes: readonly PickOutcome[]): number {
  let best = 0;
  let run = 0;
  for (const o of outcomes) {
    if (o === 'won') best = Math.max(best, ++run);
    else if (o === 'lost' || o === 'pending') run = 0;
  }
  return best;
}

/** Results in the order of `entries`. Every outcome must be final (no pending pick). */
export function scoreContest(contest: ContestScoring, entries: readonly ScoringEntry[]): EntryScore[] {
  for (const e of entries) assert.ok(!e.outcomes.includes('pending'), 'scoring needs every pick final');
  assert.equal(new Set(entries.map((e) => e.seq)).size, entries.length, 'entry seq must be unique');
  // The table takes dense positions in entry order; any unique seqs map to them order-preserving.
  const bySeq = entries.map((_, i) => i).sort((a, b) => entries[a]!.seq - entries[b]!.seq);
  const keys = new Uint8Array(entries.length);
  bySeq.forEach((i, position) => (keys[position] = scoreKey(contest.gameType, entries[i]!.outcomes)));
  const table = buildScoreTable(contest, keys);
  const scores: EntryScore[] = new Array<EntryScore>(entries.length);
  bySeq.forEach((i, position) => (scores[i] = table.scoreOf(position)));
  return scores;
}

/**
 * Every entry's rank and payout, from one number per entry (its score key) indexed by entry order (`seq`,
 * dense from 0). Entries with equal keys are treated the same, so the table holds one group per distinct key
 * (at most ~66: keys are win counts or runs of at most 64 picks, or the clean marker) and a look-up per entry
 * is O(1). Building it is one pass over `keysBySeq`, one byte per entry (2-7 ms at 1,000,000 entries),
 * where ranking whole entry records needed them all in memory at once (contest resolution, docs/contests.md).
 */
export interface ScoreTable {
  /** What the whole contest pays: the sum of every payout, never above the pot (asserted). */
  readonly paidMicros: bigint;
  keyOf(seq: number): number;
  scoreOf(seq: number): EntryScore;
}

export function buildScoreTable(contest: ContestScoring, keysBySeq: Uint8Array): ScoreTable {
  const counts = new Uint32Array(MAX_SCORE_KEY + 1);
  for (const key of keysBySeq) counts[key]!++;
  const rules = contest.payoutRules ?? 'by_place';
  const isToProtocol = rules !== 'earliest_entries';
  // Every entry of a group (one score key) has the same rank and share; under 'earliest_entries' the group's
  // earliest entries get one micro more each (markRemainders).
  const groups = new Map<number, KeyGroup>();
  const remainders = new Uint32Array(MAX_SCORE_KEY + 1);
  let paidMicros = 0n;
  let better = 0;
  for (let key = MAX_SCORE_KEY; key >= 0; key--) {
    const count = counts[key]!;
    if (count === 0) continue;
    // Descending order: the first group is the best key (the winners of the games that pay one group).
    const amountMicros = groupAmountMicros(contest, { key, isBest: better === 0, start: better, end: better + count }, rules);
    const shareMicros = amountMicros / BigInt(count);
    groups.set(key, { rank: better + 1, shareMicros, plusOneBelowSeq: 0 });
    if (isToProtocol) {
      paidMicros += shareMicros * BigInt(count); // the remainder stays in the pot, which returns it to the protocol
    } else {
      remainders[key] = Number(amountMicros - shareMicros * BigInt(count));
      paidMicros += amountMicros;
    }
    better += count;
  }
  assert.ok(paidMicros <= contest.potMicros, `contest pays ${paidMicros} from a pot of ${contest.potMicros}`);
  if (!isToProtocol) markRemainders(keysBySeq, groups, remainders);
  return {
    paidMicros,
    keyOf: (seq) => keyAt(keysBySeq, seq),
    scoreOf: (seq) => {
      const group = groups.get(keyAt(keysBySeq, seq))!;
      return { rank: group.rank, payoutMicros: group.shareMicros + (seq < group.plusOneBelowSeq ? 1n : 0n) };
    },
  };
}

interface KeyGroup {
  /** Competition rank: 1 + the number of entries with a greater key. */
  rank: number;
  shareMicros: bigint;
  /** 'earliest_entries': the group's entries with a seq below this get one micro more (its remainder). */
  plusOneBelowSeq: number;
}

/**
 * 'earliest_entries': a group's `remainder` micros go one each to its earliest entries by entry order. One
 * pass in seq order finds, per group, the seq below which its entries get that micro.
 */
function markRemainders(keysBySeq: Uint8Array, groups: Map<number, KeyGroup>, remainders: Uint32Array): void {
  let groupsLeft = remainders.reduce((n, remainder) => n + (remainder > 0 ? 1 : 0), 0);
  for (let seq = 0; seq < keysBySeq.length && groupsLeft > 0; seq++) {
    const key = keysBySeq[seq]!;
    if (remainders[key] === 0) continue;
    if (--remainders[key]! === 0) {
      groups.get(key)!.plusOneBelowSeq = seq + 1;
      groupsLeft--;
    }
  }
  assert.equal(groupsLeft, 0, 'a remainder is larger than its group');
}

/**
 * One number per entry, higher is better; equal numbers tie.
 * lineups: resolved wins. streak: longest win run. outcast and survivor: a "clean" entry beats every other;
 * the others order by wins. Clean is contract section 8 literally: outcast, "non-voided picks all won";
 * survivor, "never eliminated" (an entry is eliminated by its first lost pick). With every pick final both
 * mean "no lost pick", so an entry whose picks were all voided is clean (vacuously) and wins even with 0 wins.
 * So the winners are exactly rank 1 whenever the game pays a single group; a survivor contest with no
 * survivor still ranks its entries by wins, and pays none of them (groupAmountMicros).
 */
export function scoreKey(gameType: GameType, outcomes: readonly PickOutcome[]): number {
  // No market twice in an entry and at most 64 per contest, continuations included: keys stay in 0..65.
  assert.ok(
    outcomes.length <= CONTEST_LIMITS.maxMarkets,
    `an entry holds ${outcomes.length} picks, more than ${CONTEST_LIMITS.maxMarkets}`,
  );
  const { won, lost } = countOutcomes(outcomes);
  switch (gameType) {
    case 'lineups':
      return won;
    case 'streak':
      return longestWinRun(outcomes);
    case 'outcast':
    case 'survivor':
      return lost === 0 ? CLEAN_KEY : won;
  }
}

/** A group of entries with one score key, covering places [start, end) in descending key order. */
interface GroupPlaces {
  key: number;
  isBest: boolean;
  start: number;
  end: number;
}

/**
 * What a group of entries receives together, before it is shared. lineups: its places' share of the pot,
 * floor(pot × Σbps[start..end) / 10000) (PayoutRules: 'to_protocol' and 'earliest_entries' took cumulative
 * floors). outcast and streak pay all of the pot to the best key (clean entries, else the most wins; the
 * longest run). survivor pays it only to entries never eliminated: contract section 8 has no fallback for
 * survivor as it has for outcast, so with no survivor nobody is paid and section 11 returns the whole pot to
 * the protocol ('earliest_entries': as outcast).
 */
function groupAmountMicros(contest: ContestScoring, group: GroupPlaces, rules: PayoutRules): bigint {
  if (contest.gameType === 'survivor' && rules !== 'earliest_entries') return group.key === CLEAN_KEY ? contest.potMicros : 0n;
  if (contest.gameType !== 'lineups') return group.isBest ? contest.potMicros : 0n;
  const { start, end } = group;
  const bpsOf = (from: number, to: number) => {
    let bps = 0n;
    for (const split of contest.winningSplitBps.slice(from, to)) bps += BigInt(split);
    return bps;
  };
  if (rules === 'by_place') return (contest.potMicros * bpsOf(start, end)) / BPS;
  return (contest.potMicros * bpsOf(0, end)) / BPS - (contest.potMicros * bpsOf(0, start)) / BPS;
}

function keyAt(keysBySeq: Uint8Array, seq: number): number {
  assert.ok(Number.isInteger(seq) && seq >= 0 && seq < keysBySeq.length, `no entry with seq ${seq}`);
  return keysBySeq[seq]!;
}
