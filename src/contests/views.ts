// Pure. Contest records to the wire shapes of interface.md (ContestDetail, ContestSummary, caller entries).
// Money in the detail and the summary is int64 JSON numbers, as the interface types it.
import assert from 'node:assert/strict';
import type { Market } from '../contract/markets.js';
import type { CallerEntry, ContestCaller, ContestDetail, ContestMarket, ContestSummary, PickOutcome } from '../contract/contests.js';
import { imageUrl, type ContestRecord, type EntryRecord } from '../records/contests.js';
import { pickOutcome } from './rules.js';
import { countOutcomes } from './scoring.js';
import type { MarketOf } from '../contract/markets.js';

/** Contract section 8: total_pot_micros = protocol_prize_pool_micros + entries_filled × bet_amount_micros. */
export function totalPotMicros(contest: ContestRecord): number {
  const potMicros = contest.protocolPrizePoolMicros + contest.entriesFilled * contest.betAmountMicros;
  assert.ok(Number.isSafeInteger(potMicros), `pot of contest ${contest.contestId} is not a safe integer`);
  return potMicros;
}

export function summaryView(contest: ContestRecord): ContestSummary {
  return {
    contest_id: contest.contestId,
    title: contest.title,
    category: contest.category,
    status: contest.status,
    game_type: contest.gameType,
    bet_type: { ...contest.betType },
    bet_amount_micros: contest.betAmountMicros,
    total_pot_micros: totalPotMicros(contest),
    entries_filled: contest.entriesFilled,
    entry_cap: contest.entryCap,
    betting_closes_ms: contest.bettingClosesMs,
    image_url: imageUrl(contest.contestId),
    created_at_ms: contest.createdAtMs,
  };
}

export function detailView(contest: ContestRecord, marketOf: MarketOf, caller: ContestCaller | null): ContestDetail {
  return {
    contest_id: contest.contestId,
    title: contest.title,
    category: contest.category,
    status: contest.status,
    bet_amount_micros: contest.betAmountMicros,
    protocol_prize_pool_micros: contest.protocolPrizePoolMicros,
    total_pot_micros: totalPotMicros(contest),
    entries_filled: contest.entriesFilled,
    entry_cap: contest.entryCap,
    entry_opens_at_ms: contest.entryOpensAtMs,
    betting_closes_ms: contest.bettingClosesMs,
    live_ends_at_ms: contest.liveEndsAtMs,
    resolved_at_ms: contest.resolvedAtMs,
    created_at_ms: contest.createdAtMs,
    image_url: imageUrl(contest.contestId),
    description: contest.description,
    bet_type: { ...contest.betType },
    game_type: contest.gameType,
    winning_split_bps: [...contest.winningSplitBps],
    markets: contest.markets.map(({ marketId, category }) => marketView(requireMarket(marketOf, marketId), category)),
    caller,
  };
}

function marketView(market: Market, category: string): ContestMarket {
  return {
    market_id: market.market_id,
    category,
    name: market.name,
    description: market.description,
    status: market.status,
    outcome: market.outcome,
    source_kind: market.source_kind,
    source_event_id: market.source_event_id,
    source_market_id: market.source_market_id,
    betting_closes_at_ms: market.betting_closes_at_ms,
    live_ends_at_ms: market.live_ends_at_ms,
    resolution_time_ms: market.resolution_time_ms,
  };
}

/** Outcomes are frozen in the settlement once the contest is final, and follow the markets before. */
export function entryOutcomes(entry: EntryRecord, marketOf: MarketOf): PickOutcome[] {
  if (entry.settlement !== null) return [...entry.settlement.outcomes];
  return entry.picks.map((p) => pickOutcome(p.direction, requireMarket(marketOf, p.marketId)));
}

export function callerEntryView(entry: EntryRecord, marketOf: MarketOf): CallerEntry {
  const outcomes = entryOutcomes(entry, marketOf);
  const { won, pending } = countOutcomes(outcomes);
  return {
    entry_index: entry.entryIndex,
    created_at_ms: entry.createdAtMs,
    picks: entry.picks.map((p, i) => ({ market_id: p.marketId, direction: p.direction, outcome: outcomes[i]! })),
    open_leg_count: pending,
    resolved_win_count: won,
    payout_micros: entry.settlement?.payoutMicros ?? null,
    net_payout_micros: entry.settlement?.netPayoutMicros ?? null,
    rank: entry.settlement?.rank ?? null,
  };
}

export function callerView(entries: readonly EntryRecord[], marketOf: MarketOf): ContestCaller {
  return { joined: entries.length > 0, entries: entries.map((e) => callerEntryView(e, marketOf)) };
}

/** A contest's markets are checked to exist at creation and markets are never deleted. */
function requireMarket(marketOf: MarketOf, marketId: number): Market {
  const market = marketOf(marketId);
  assert.ok(market !== undefined, `contest market ${marketId} is missing`);
  return market;
}
