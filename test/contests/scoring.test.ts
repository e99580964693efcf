// The pure resolution rules of contract section 8 (contests/scoring.ts): ranks, shares, ties, voided picks and
// the rounding rule: every share rounded down, the sum paid never above the pot, and what is not paid
// (rounding, no winner) left for the protocol (contract section 11).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildScoreTable, longestWinRun, scoreContest, scoreKey, type ScoringEntry } from '../../src/contests/scoring.js';
import type { GameType, PickOutcome } from '../../src/contract/contests.js';

const W: PickOutcome = 'won';
const L: PickOutcome = 'lost';
const V: PickOutcome = 'voided';

const entries = (...outcomes: PickOutcome[][]): ScoringEntry[] => outcomes.map((o, seq) => ({ seq, outcomes: o }));
const score = (gameType: GameType, potMicros: bigint, list: ScoringEntry[], winningSplitBps: number[] = []) =>
  scoreContest({ gameType, potMicros, winningSplitBps }, list).map((r) => ({ rank: r.rank, payout: r.payoutMicros }));

describe('lineups', () => {
  it('each place gets its own floored share of the pot: equal splits pay alike, a lower place never more, the dust goes back', () => {
    // Cumulative floors paid these 500,001 and 500,002 (the lower place more), and 0 and 1.
    assert.deepEqual(score('lineups', 1_000_003n, entries([W], [L]), [5000, 5000]), [
      { rank: 1, payout: 500_001n },
      { rank: 2, payout: 500_001n },
    ]);
    assert.deepEqual(score('lineups', 1n, entries([W], [L]), [6000, 4000]), [
      { rank: 1, payout: 0n },
      { rank: 2, payout: 0n },
    ]);
    const keys = Uint8Array.from([1, 0]);
    assert.equal(
      buildScoreTable({ gameType: 'lineups', potMicros: 1_000_003n, winningSplitBps: [5000, 5000] }, keys).paidMicros,
      1_000_002n,
    );
  });

  it('ranks by resolved wins and pays each place its split; tied places share the sum of their splits', () => {
    // Places: A 1st (5000), B and C tie for 2nd-3rd (3000 + 2000), D 4th (no split).
    const result = score('lineups', 1_000_001n, entries([W, W, W], [W, W, L], [W, L, W], [L, L, L]), [5000, 3000, 2000]);
    assert.deepEqual(result, [
      { rank: 1, payout: 500_000n }, // floor(1_000_001 × 0.5)
      { rank: 2, payout: 250_000n }, // floor((1_000_001 − 500_000) / 2): the odd micro is not paid
      { rank: 2, payout: 250_000n },
      { rank: 4, payout: 0n },
    ]);
  });

  it('pays a tied group floor(amount / n) each, whatever the entry order: the remainder goes to no entry', () => {
    const list: ScoringEntry[] = [
      { seq: 7, outcomes: [W] },
      { seq: 3, outcomes: [W] },
      { seq: 5, outcomes: [W] },
    ];
    assert.deepEqual(score('lineups', 100n, list, [10_000]), [
      { rank: 1, payout: 33n },
      { rank: 1, payout: 33n },
      { rank: 1, payout: 33n },
    ]);
  });

  it('a voided pick counts neither as a win nor as a loss', () => {
    assert.deepEqual(score('lineups', 1000n, entries([W, V], [W, L], [V, V]), [7000, 3000]), [
      { rank: 1, payout: 500n },
      { rank: 1, payout: 500n },
      { rank: 3, payout: 0n },
    ]);
  });

  it('places nobody reached, and a split below 10000 bps, leave the rest of the pot unpaid', () => {
    assert.deepEqual(score('lineups', 1000n, entries([W]), [6000, 4000]), [{ rank: 1, payout: 600n }]);
    assert.deepEqual(score('lineups', 1000n, entries([W], [L]), [5000, 2500]), [
      { rank: 1, payout: 500n },
      { rank: 2, payout: 250n },
    ]);
  });
});

describe('outcast', () => {
  it('the entries whose non-voided picks all won split the pot equally, an all-voided entry among them', () => {
    // A, B and D have no lost pick (D vacuously: it has no non-voided pick). 1001 / 3 = 333 rest 2, unpaid.
    assert.deepEqual(score('outcast', 1001n, entries([W, W], [W, V], [W, L], [V, V])), [
      { rank: 1, payout: 333n },
      { rank: 1, payout: 333n },
      { rank: 4, payout: 0n },
      { rank: 1, payout: 333n },
    ]);
  });

  it('an entry whose picks were all voided takes the pot from an entry that lost (the reproduced case)', () => {
    assert.deepEqual(score('outcast', 2_000_000n, entries([V], [L])), [
      { rank: 1, payout: 2_000_000n },
      { rank: 2, payout: 0n },
    ]);
  });

  it('an all-voided entry beats an entry with more wins and one loss', () => {
    assert.deepEqual(score('outcast', 3_000_000n, entries([W, L], [V, V], [W, W, L])), [
      { rank: 3, payout: 0n },
      { rank: 1, payout: 3_000_000n },
      { rank: 2, payout: 0n },
    ]);
  });

  it('with no clean entry, the entries with the most wins split the pot', () => {
    assert.deepEqual(score('outcast', 900n, entries([W, L, W], [L, W, W], [W, L, L])), [
      { rank: 1, payout: 450n },
      { rank: 1, payout: 450n },
      { rank: 3, payout: 0n },
    ]);
  });

  it('when no entry is clean and every entry has zero wins they all share the pot', () => {
    // 10 / 3 = 3 rest 1: the odd micro is not paid.
    assert.deepEqual(score('outcast', 10n, entries([L], [L], [V, L])), [
      { rank: 1, payout: 3n },
      { rank: 1, payout: 3n },
      { rank: 1, payout: 3n },
    ]);
  });
});

describe('survivor', () => {
  it('entries never eliminated split the pot; eliminated entries rank by wins', () => {
    assert.deepEqual(score('survivor', 300n, entries([W, W, W], [W, V], [W, W, L], [L])), [
      { rank: 1, payout: 150n },
      { rank: 1, payout: 150n },
      { rank: 3, payout: 0n },
      { rank: 4, payout: 0n },
    ]);
  });

  it('an entry whose picks were all voided was never eliminated: it survives', () => {
    // The reproduced case: A [voided] survives, B [lost] was eliminated. A takes the pot alone.
    assert.deepEqual(score('survivor', 2_000_000n, entries([V], [L])), [
      { rank: 1, payout: 2_000_000n },
      { rank: 2, payout: 0n },
    ]);
    // It beats an eliminated entry with a win, and shares with a survivor that won: 1001 / 2 = 500 rest 1.
    assert.deepEqual(score('survivor', 1001n, entries([W, L], [V, V], [W, V])), [
      { rank: 3, payout: 0n },
      { rank: 1, payout: 500n },
      { rank: 1, payout: 500n },
    ]);
  });

  it('with no survivor, nobody is paid: entries still rank by wins, and the whole pot is left for the protocol', () => {
    const list = entries([W, L], [L], [W, W, L], [V, W, W, L]);
    assert.deepEqual(score('survivor', 7n, list), [
      { rank: 3, payout: 0n },
      { rank: 4, payout: 0n },
      { rank: 1, payout: 0n },
      { rank: 1, payout: 0n },
    ]);
    const keys = Uint8Array.from(list, (e) => scoreKey('survivor', e.outcomes));
    assert.equal(buildScoreTable({ gameType: 'survivor', potMicros: 7n, winningSplitBps: [] }, keys).paidMicros, 0n);
  });
});

describe("the former payout rules ('earliest_entries'), for a settlement decided under them", () => {
  const formerScore = (gameType: GameType, potMicros: bigint, list: ScoringEntry[]) =>
    scoreContest({ gameType, potMicros, winningSplitBps: [], payoutRules: 'earliest_entries' }, list).map((r) => ({
      rank: r.rank,
      payout: r.payoutMicros,
    }));

  it("a group's remainder micros go one each to its earliest entries, and the whole amount is paid", () => {
    const list = entries([W], [L], [W], [W]);
    assert.deepEqual(formerScore('outcast', 11n, list), [
      { rank: 1, payout: 4n },
      { rank: 4, payout: 0n },
      { rank: 1, payout: 4n },
      { rank: 1, payout: 3n },
    ]);
    const keys = Uint8Array.from(list, (e) => scoreKey('outcast', e.outcomes));
    const table = buildScoreTable({ gameType: 'outcast', potMicros: 11n, winningSplitBps: [], payoutRules: 'earliest_entries' }, keys);
    assert.equal(table.paidMicros, 11n);
  });

  it('survivor with no survivor pays the entries with the most wins', () => {
    assert.deepEqual(formerScore('survivor', 7n, entries([W, L], [L], [W, W, L], [V, W, W, L])), [
      { rank: 3, payout: 0n },
      { rank: 4, payout: 0n },
      { rank: 1, payout: 4n },
      { rank: 1, payout: 3n },
    ]);
  });

  it("'to_protocol' and 'earliest_entries' pay lineups places by cumulative floors, as they were decided", () => {
    for (const payoutRules of ['to_protocol', 'earliest_entries'] as const) {
      const result = scoreContest(
        { gameType: 'lineups', potMicros: 1_000_003n, winningSplitBps: [5000, 5000], payoutRules },
        entries([W], [L]),
      );
      assert.deepEqual(
        result.map((r) => r.payoutMicros),
        [500_001n, 500_002n],
        payoutRules,
      );
    }
  });
});

describe('streak', () => {
  it('the run is the longest sequence of consecutive wins in pick order; voided picks do not break it', () => {
    assert.equal(longestWinRun([W, V, W, L, W]), 2);
    assert.equal(longestWinRun([L, W, W, W]), 3);
    assert.equal(longestWinRun([V, V]), 0);
    assert.equal(longestWinRun([]), 0);
  });

  it('the entries with the longest run split the pot', () => {
    assert.deepEqual(score('streak', 1000n, entries([W, W, L], [L, W, W], [W, L, W], [W, V, W])), [
      { rank: 1, payout: 333n },
      { rank: 1, payout: 333n },
      { rank: 4, payout: 0n },
      { rank: 1, payout: 333n },
    ]);
  });
});

describe('every game type', () => {
  it('a contest without entries pays nothing', () => {
    for (const gameType of ['lineups', 'outcast', 'survivor', 'streak'] as const) {
      assert.deepEqual(score(gameType, 5_000_000n, [], gameType === 'lineups' ? [10_000] : []), []);
    }
  });

  it('refuses to score a pick that is still pending (a programmer error)', () => {
    assert.throws(() => score('outcast', 10n, entries([W, 'pending'])), /final/);
  });

  it('paid + returned = the pot to the micro: floor shares, the remainder and a pot nobody wins returned', () => {
    let state = 12345;
    const random = (n: number) => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % n;
    };
    const outcomesPool: PickOutcome[] = [W, L, V];
    for (let round = 0; round < 300; round++) {
      const list = Array.from({ length: 1 + random(30) }, (_, seq) => ({
        seq,
        outcomes: Array.from({ length: 1 + random(5) }, () => outcomesPool[random(3)]!),
      }));
      const potMicros = BigInt(1 + random(10_000_000));
      const split = Array.from({ length: 1 + random(6) }, () => random(2000));
      for (const gameType of ['lineups', 'outcast', 'survivor', 'streak'] as const) {
        const winningSplitBps = gameType === 'lineups' ? split : [];
        const result = score(gameType, potMicros, list, winningSplitBps);
        const paid = result.reduce((sum, r) => sum + r.payout, 0n);
        // What settlement.ts pays, and from which it returns pot − paidMicros to the protocol's available.
        const keys = Uint8Array.from(list, (e) => scoreKey(gameType, e.outcomes));
        const table = buildScoreTable({ gameType, potMicros, winningSplitBps }, keys);
        assert.equal(paid, table.paidMicros, `${gameType}: the table pays what its entries are paid`);
        const returned = potMicros - table.paidMicros;
        if (gameType === 'lineups') {
          // Each tied group loses less than one micro per entry to rounding, on top of the unpaid places.
          const places = split.slice(0, list.length).reduce((s, b) => s + b, 0);
          const placesMicros = (potMicros * BigInt(places)) / 10_000n;
          assert.ok(paid <= placesMicros && placesMicros - paid < BigInt(list.length), `lineups pays ${paid} of ${placesMicros}`);
        } else {
          assertOneGroupPaid(gameType, list, result, potMicros, returned);
        }
        assert.equal(paid + returned, potMicros);
        assert.ok(result.every((r) => r.rank >= 1 && r.rank <= list.length && r.payout >= 0n));
      }
    }
  });

  it('every rank and payout is what a direct reading of the rules gives, with entries in any order and seqs with gaps', () => {
    // The model below restates docs/contests.md ("Ranks and payouts", "Rounding") entry by entry, the slow way.
    let state = 777;
    const random = (n: number) => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % n;
    };
    const outcomesPool: PickOutcome[] = [W, L, V];
    for (let round = 0; round < 300; round++) {
      const size = random(40);
      const seqs = Array.from({ length: size }, (_, i) => 3 * i + random(3)).sort(() => random(3) - 1);
      const list = seqs.map((seq) => ({ seq, outcomes: Array.from({ length: 1 + random(5) }, () => outcomesPool[random(3)]!) }));
      const potMicros = BigInt(random(10_000_000));
      const split = Array.from({ length: 1 + random(6) }, () => random(1667)); // Σ ≤ 10000, as configs must be
      for (const gameType of ['lineups', 'outcast', 'survivor', 'streak'] as const) {
        const splitBps = gameType === 'lineups' ? split : [];
        assert.deepEqual(
          score(gameType, potMicros, list, splitBps),
          modelScores(gameType, potMicros, list, splitBps),
          `${gameType}, round ${round}`,
        );
      }
    }
  });
});

/**
 * outcast, survivor and streak pay one group: its entries rank 1 and get floor(pot / n) each, the others
 * nothing; pot mod n is returned, or the whole pot when nobody wins (a survivor contest with no survivor).
 */
function assertOneGroupPaid(
  gameType: 'outcast' | 'survivor' | 'streak',
  list: ScoringEntry[],
  result: Array<{ rank: number; payout: bigint }>,
  potMicros: bigint,
  returnedMicros: bigint,
): void {
  const isWinner = contractWinners(gameType, list);
  const winnerCount = BigInt(isWinner.filter(Boolean).length);
  const shareMicros = winnerCount === 0n ? 0n : potMicros / winnerCount;
  result.forEach((r, i) => {
    assert.equal(r.payout, isWinner[i] ? shareMicros : 0n, `${gameType}: payout of entry ${i}`);
    if (winnerCount > 0n) assert.equal(r.rank === 1, isWinner[i], `${gameType}: rank 1 is exactly the winners`);
  });
  assert.equal(returnedMicros, winnerCount === 0n ? potMicros : potMicros % winnerCount, `${gameType}: returned`);
}

/**
 * Contract section 8, restated: outcast, no lost pick wins, and if no entry qualifies the most wins do;
 * survivor, no lost pick (never eliminated) wins, with no fallback; streak, the longest run of wins.
 */
function contractWinners(gameType: 'outcast' | 'survivor' | 'streak', list: ScoringEntry[]): boolean[] {
  if (gameType === 'streak') {
    const runs = list.map((e) => longestWinRun(e.outcomes));
    return runs.map((run) => run === Math.max(...runs));
  }
  const isClean = list.map((e) => !e.outcomes.includes(L));
  if (gameType === 'survivor' || isClean.some(Boolean)) return isClean;
  const wins = list.map((e) => e.outcomes.filter((o) => o === W).length);
  return wins.map((w) => w === Math.max(...wins));
}

/** The rules read literally: one entry at a time, no shortcut shared with contests/scoring.ts. */
function modelScores(gameType: GameType, potMicros: bigint, list: ScoringEntry[], splitBps: number[]) {
  const keyOf = (outcomes: readonly PickOutcome[]) => {
    const wins = outcomes.filter((o) => o === W).length;
    if (gameType === 'lineups') return wins;
    if (gameType === 'streak') {
      let best = 0;
      let run = 0;
      for (const o of outcomes)
        if (o === W) best = Math.max(best, ++run);
        else if (o === L) run = 0;
      return best;
    }
    return outcomes.includes(L) ? wins : Infinity;
  };
  const keys = list.map((e) => keyOf(e.outcomes));
  const payouts = list.map(() => 0n);
  const share = (amountMicros: bigint, members: number[]) => {
    for (const i of members) payouts[i] = amountMicros / BigInt(members.length);
  };
  const distinctKeys = [...new Set(keys)].sort((a, b) => b - a);
  let place = 0;
  for (const key of distinctKeys) {
    const members = list.map((_, i) => i).filter((i) => keys[i] === key);
    // Contract section 8: "ties share the sum of the tied places' winning_split_bps of the pot", floored.
    const placesBps = BigInt(splitBps.slice(place, place + members.length).reduce((s, b) => s + b, 0));
    const isPaidGroup = gameType === 'survivor' ? key === Infinity : key === distinctKeys[0];
    const amountMicros = gameType === 'lineups' ? (potMicros * placesBps) / 10_000n : isPaidGroup ? potMicros : 0n;
    share(amountMicros, members);
    place += members.length;
  }
  return list.map((_, i) => ({ rank: 1 + keys.filter((k) => k > keys[i]!).length, payout: payouts[i]! }));
}
