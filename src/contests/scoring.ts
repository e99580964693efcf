// Pure resolution of a contest (contract section 8): ranks and payouts from the entries' pick outcomes.
// No store, no clock; contests.ts applies the result in one transaction. Amounts are BigInt micros.
//
// Rounding (docs/contests.md): every share is rounded down; the micros left over inside a group of winners
// that share an amount go one each to the group's earliest entries (lowest seq). Lineups place shares are
// cumulative floors, floor(pot × bps[0..end) / 10000) − floor(pot × bps[0..start) / 10000), so they add up to
// exactly floor(pot × Σbps / 10000). The sum paid therefore never exceeds the pot (asserted); what is not paid
// (unused split places, Σbps < 10000, a contest nobody entered) stays with the protocol.
import assert from 'node:assert/strict';
import type { GameType, PickOutcome } from '../schemas/contests.js';

export interface ScoringEntry {
  /** Entry order in the contest, unique: the tie-break for remainders. */
  seq: number;
  outcomes: readonly PickOutcome[];
}

export interface EntryScore {
  /** Competition ranking ("1224"): 1 + the number of entries strictly better. */
  rank: number;
  payoutMicros: bigint;
}

export interface ContestScoring {
  gameType: GameType;
  winningSplitBps: readonly number[];
  potMicros: bigint;
}

const BPS = 10_000n;

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
  const keys = entries.map((e) => scoreKey(contest.gameType, e.outcomes));
  const ranks = competitionRanks(keys);
  const payouts =
    contest.gameType === 'lineups'
      ? lineupsPayouts(contest, entries, keys)
      : splitAmongWinners(contest.potMicros, entries, winnersOf(contest.gameType, entries, keys));
  const paidMicros = payouts.reduce((sum, p) => sum + p, 0n);
  assert.ok(paidMicros <= contest.potMicros, `contest pays ${paidMicros} from a pot of ${contest.potMicros}`);
  return entries.map((_, i) => ({ rank: ranks[i]!, payoutMicros: payouts[i]! }));
}

/**
 * One number per entry, higher is better; equal numbers tie.
 * lineups: resolved wins. streak: longest win run. outcast and survivor: a "clean" entry beats every other;
 * the others order by wins. Clean is contract section 8 literally: outcast, "non-voided picks all won";
 * survivor, "never eliminated" (an entry is eliminated by its first lost pick). With every pick final both
 * mean "no lost pick", so an entry whose picks were all voided is clean (vacuously) and wins even with 0 wins.
 * So the winners are exactly rank 1 whenever the game pays a single group.
 */
function scoreKey(gameType: GameType, outcomes: readonly PickOutcome[]): number {
  const { won, lost } = countOutcomes(outcomes);
  switch (gameType) {
    case 'lineups':
      return won;
    case 'streak':
      return longestWinRun(outcomes);
    case 'outcast':
    case 'survivor':
      // Wins never reach MAX: an entry holds at most 64 picks (no market twice, at most 64 per contest).
      return lost === 0 ? Number.MAX_SAFE_INTEGER : won;
  }
}

/** rank = 1 + the number of keys strictly greater: the first position of the key in descending order. */
function competitionRanks(keys: readonly number[]): number[] {
  const firstPosition = new Map<number, number>();
  [...keys].sort((a, b) => b - a).forEach((key, position) => {
    if (!firstPosition.has(key)) firstPosition.set(key, position);
  });
  return keys.map((key) => firstPosition.get(key)! + 1);
}

/** outcast/survivor/streak pay one group: the entries with the best key (clean ones, else most wins; longest run). */
function winnersOf(gameType: GameType, entries: readonly ScoringEntry[], keys: readonly number[]): boolean[] {
  assert.ok(gameType !== 'lineups');
  const best = keys.reduce((max, k) => Math.max(max, k), -1);
  return keys.map((k) => k === best);
}

function splitAmongWinners(potMicros: bigint, entries: readonly ScoringEntry[], isWinner: readonly boolean[]): bigint[] {
  const payouts = entries.map(() => 0n);
  const winners = entries.map((e, i) => ({ seq: e.seq, i })).filter(({ i }) => isWinner[i]);
  shareEqually(potMicros, winners, payouts);
  return payouts;
}

/** Places in order of key (ties by seq); a tied group shares the sum of the places it covers. */
function lineupsPayouts(contest: ContestScoring, entries: readonly ScoringEntry[], keys: readonly number[]): bigint[] {
  const payouts = entries.map(() => 0n);
  const order = entries.map((e, i) => ({ seq: e.seq, i })).sort((a, b) => keys[b.i]! - keys[a.i]! || a.seq - b.seq);
  const cumulativeBps = [0n];
  for (const bps of contest.winningSplitBps) cumulativeBps.push(cumulativeBps.at(-1)! + BigInt(bps));
  const placeFloor = (place: number) =>
    (contest.potMicros * cumulativeBps[Math.min(place, contest.winningSplitBps.length)]!) / BPS;
  let start = 0;
  while (start < order.length) {
    let end = start + 1;
    while (end < order.length && keys[order[end]!.i] === keys[order[start]!.i]) end++;
    shareEqually(placeFloor(end) - placeFloor(start), order.slice(start, end), payouts);
    start = end;
  }
  return payouts;
}

/** Equal shares, rounded down; the remainder goes one micro each to the earliest entries (lowest seq). */
function shareEqually(amountMicros: bigint, group: readonly { seq: number; i: number }[], payouts: bigint[]): void {
  if (group.length === 0) return;
  const bySeq = [...group].sort((a, b) => a.seq - b.seq);
  const size = BigInt(bySeq.length);
  const share = amountMicros / size;
  const remainder = Number(amountMicros - share * size);
  bySeq.forEach(({ i }, position) => {
    payouts[i] = share + (position < remainder ? 1n : 0n);
  });
}
