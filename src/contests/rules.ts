// Pure rules of contract section 8, called by the contest actor on a contest's lane: the configuration check of
// an admin create, the entry window, and the pick rules of a submission. Each throws the contract's coded
// error; none reads a clock or the store (the caller passes `nowMs` and a market look-up).
import { ApiError, errors, validationError, type ErrorDetail } from '../lib/errors.js';
import { isOpenForBetting } from '../markets/market-table.js';
import type { Market } from '../contract/markets.js';
import type { ContestPick, CreateContest, PickOutcome } from '../contract/contests.js';
import type { ContestRecord, PickRecord } from '../records/contests.js';

const MAX_TOTAL_BPS = 10_000;

/** Every configuration rule that does not need the store; all problems reported at once. */
export function checkContestConfig(input: CreateContest, nowMs: number): void {
  const details: ErrorDetail[] = [];
  const problem = (path: string, message: string) => details.push({ path, message });

  if (input.betting_closes_ms <= nowMs) problem('/betting_closes_ms', 'must be in the future');
  if (input.entry_opens_at_ms !== undefined && input.entry_opens_at_ms >= input.betting_closes_ms) {
    problem('/entry_opens_at_ms', 'must be before betting_closes_ms');
  }
  if (input.live_ends_at_ms !== undefined && input.live_ends_at_ms < input.betting_closes_ms) {
    problem('/live_ends_at_ms', 'must not be before betting_closes_ms');
  }

  const splitBps = input.winning_split_bps ?? [];
  const totalBps = splitBps.reduce((sum, bps) => sum + bps, 0);
  if (totalBps > MAX_TOTAL_BPS) problem('/winning_split_bps', `sums to ${totalBps}, more than 10000`);
  if (input.game_type === 'lineups' && totalBps === 0) {
    problem('/winning_split_bps', 'lineups needs at least one place with a positive share');
  }
  if (input.game_type !== 'lineups' && splitBps.length > 0) {
    problem('/winning_split_bps', `${input.game_type} splits the pot among its winners; leave it empty`);
  }

  const seen = new Set<number>();
  input.markets.forEach((m, i) => {
    if (seen.has(m.market_id)) problem(`/markets/${i}/market_id`, `market ${m.market_id} is listed twice`);
    seen.add(m.market_id);
  });
  const { kind, value } = input.bet_type;
  if (kind === 'num_bets' && value > input.markets.length) {
    problem('/bet_type/value', `needs ${value} picks but the contest has ${input.markets.length} markets`);
  }
  if (kind === 'bets_per_category') {
    for (const [category, count] of countBy(input.markets.map((m) => m.category))) {
      if (count < value) problem('/bet_type/value', `category "${category}" has ${count} markets, fewer than ${value}`);
    }
  }

  // Every amount the detail shows must stay a safe int64 JSON number (contract section 1).
  const maxPotMicros = BigInt(input.protocol_prize_pool_micros) + BigInt(input.entry_cap) * BigInt(input.bet_amount_micros);
  if (maxPotMicros > BigInt(Number.MAX_SAFE_INTEGER)) {
    problem('/entry_cap', 'protocol_prize_pool_micros + entry_cap × bet_amount_micros exceeds 2^53−1');
  }
  if (details.length > 0) throw validationError(details);
}

/**
 * Status open and entry_opens_at_ms ≤ now ≤ betting_closes_ms. The interface defines betting_closes_ms as
 * the "last time at which entries are accepted", so it is inclusive; contract section 8 writes a half-open
 * [opens, closes), and where the two disagree the interface wins (contract, preamble).
 */
export function checkEntryWindow(contest: ContestRecord, nowMs: number): void {
  if (contest.status !== 'open') throw errors.contestNotOpen(contest.status);
  // Settlement in batches needs a frozen entry set (settlement.ts). A resolution cannot meet an entry anyway
  // (its markets are final, picks need OPEN ones), but a void can: it may start while markets are OPEN.
  if (contest.settling !== undefined) throw errors.contestSettling(contest.settling.kind);
  if (contest.entryOpensAtMs !== null && nowMs < contest.entryOpensAtMs) throw errors.contestEntryNotOpenYet();
  if (nowMs > contest.bettingClosesMs) throw errors.contestBettingClosed();
}

/**
 * The pick rules of one submission. `previousPicks` are the picks already in the entry being continued
 * (empty for a new entry). Order of checks: the number of picks within what bet_type allows, duplicate,
 * membership, market open, then the bet_type count exactly.
 *
 * bet_type on a new entry is contract section 8 literally (num_bets: exactly value picks; bets_per_category:
 * exactly value picks in each category of the contest). A survivor/streak continuation is one more round:
 * num_bets: exactly value picks; bets_per_category: exactly value picks in each category it touches.
 */
export function checkPicks(
  contest: ContestRecord,
  picks: readonly ContestPick[],
  previousPicks: readonly PickRecord[],
  marketOf: (marketId: number) => Market | undefined,
  nowMs: number,
): void {
  checkPickCountBound(contest, picks, previousPicks.length > 0);
  const taken = new Set(previousPicks.map((p) => p.marketId));
  for (const pick of picks) {
    if (taken.has(pick.market_id)) throw errors.duplicatePick(pick.market_id);
    taken.add(pick.market_id);
  }
  const categoryOf = new Map(contest.markets.map((m) => [m.marketId, m.category]));
  for (const pick of picks) {
    if (!categoryOf.has(pick.market_id)) throw errors.pickNotInContest(pick.market_id);
  }
  for (const pick of picks) {
    const market = marketOf(pick.market_id);
    if (market === undefined || !isOpenForBetting(market, nowMs)) throw errors.marketNotOpen(pick.market_id);
  }
  const { kind, value } = contest.betType;
  if (kind === 'num_bets') {
    if (picks.length !== value) throw errors.wrongPickCount(value, picks.length);
    return;
  }
  const picked = countBy(picks.map((p) => categoryOf.get(p.market_id)!));
  const isContinuation = previousPicks.length > 0;
  const required = isContinuation ? [...picked.keys()] : [...new Set(contest.markets.map((m) => m.category))];
  for (const category of required) {
    const count = picked.get(category) ?? 0;
    if (count !== value) throw errors.wrongCategoryPickCount(category, value, count);
  }
}

/**
 * No pick at all, or more than bet_type lets one submission hold, breaks the count rule whatever the picks
 * are (contract section 2: 422 INVALID_PICKS). Checked first: the body's list may be far longer than any
 * contest accepts (CONTEST_LIMITS.maxBodyPicks), and the other checks then run on at most the rule's count.
 */
function checkPickCountBound(contest: ContestRecord, picks: readonly ContestPick[], isContinuation: boolean): void {
  const { kind, value } = contest.betType;
  if (kind === 'num_bets') {
    if (picks.length === 0 || picks.length > value) throw errors.wrongPickCount(value, picks.length);
    return;
  }
  // bets_per_category: value in each category; a new entry needs every category, so that total exactly.
  const mostPicks = value * new Set(contest.markets.map((m) => m.category)).size;
  if (picks.length > 0 && picks.length <= mostPicks) return;
  throw isContinuation ? new ApiError('INVALID_PICKS') : errors.wrongPickCount(mostPicks, picks.length);
}

/** A pick's outcome follows its market (contract section 8): VOID → voided; up wins on YES, down on NO. */
export function pickOutcome(direction: PickRecord['direction'], market: Market): PickOutcome {
  if (market.status === 'VOIDED') return 'voided';
  if (market.status === 'OPEN' || market.outcome === null) return 'pending';
  return (market.outcome === 'YES') === (direction === 'up') ? 'won' : 'lost';
}

/** Survivor and streak: an entry is out as soon as one of its non-voided picks has lost. */
export function isEliminated(outcomes: readonly PickOutcome[]): boolean {
  return outcomes.includes('lost');
}

function countBy(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return counts;
}
