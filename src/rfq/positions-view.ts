// Main thread; reads only. GET /v1/user/positions (contract section 11, Views): the caller's filled RFQs,
// newest first, from the `userRfqs` index (the same walk as history.ts), each with its fill (`fills`) for
// what it paid and when. Positions have no index of their own, so every page, filtered or not, walks at most
// VIEWS_SCAN_MAX index rows (RFQs of any status): past that it comes back short (possibly empty) with a cursor
// where the walk goes on. Also the leg and outcome views that GET /v1/mm/fills shares (maker-fills-view.ts).
import assert from 'node:assert/strict';
import type { MarketOf } from '../contract/markets.js';
import type { PositionOutcome } from '../records/ledger.js';
import type { Store } from '../store/db.js';
import { VIEWS_SCAN_MAX, type Position, type PositionLeg, type SettledFilter } from '../contract/views.js';
import type { FillRecord } from '../records/fills.js';
import { legOutcome, positionOutcome } from './positions.js';
import type { RfqLeg, RfqRecord } from '../records/rfqs.js';
import { readFill, readRfq, userRfqsNewestFirst } from './rfq-records.js';

/** Where a page ends: the last row's (created_at_ms, request_id), as history.ts. */
export type PositionCursor = [createdAtMs: number, requestId: string];

/** A page's markets, each read once however many of its positions name it. */
export function cachedMarkets(marketOf: MarketOf): MarketOf {
  const seen = new Map<number, ReturnType<MarketOf>>();
  return (marketId) => {
    if (!seen.has(marketId)) seen.set(marketId, marketOf(marketId));
    return seen.get(marketId);
  };
}

export function legViews(legs: readonly RfqLeg[], marketOf: MarketOf): PositionLeg[] {
  return legs.map((leg) => {
    const market = marketOf(leg.marketId);
    // A fill's market exists (the RFQ was admitted against it); absent would be a lost record, shown as open.
    const status = market?.status ?? 'OPEN';
    const outcome = status === 'VOIDED' ? 'VOID' : status === 'RESOLVED' ? (market?.outcome ?? null) : null;
    return { market_id: leg.marketId, direction: leg.direction, market_status: status, outcome };
  });
}

/**
 * How a settled fill ended, or null while open. Fills settled before the money model (schema 5) kept no
 * outcome: theirs is decided again from their markets, which are final once a fill settled.
 */
export function settledOutcome(fill: FillRecord, marketOf: MarketOf): PositionOutcome | null {
  if (fill.settledPaidMicros === null) return null;
  const outcome = fill.outcome ?? positionOutcome(fill.legs.map((leg) => legOutcome(leg, marketOf(leg.marketId))));
  assert.ok(outcome !== null, `fill ${fill.requestId} is settled but its markets decide nothing`);
  return outcome;
}

export const matchesFilter = (fill: FillRecord, status: SettledFilter | undefined) =>
  status === undefined || (status === 'open') === (fill.settledPaidMicros === null);

export function userPositionsPage(
  store: Store,
  marketOf: MarketOf,
  userId: string,
  page: { status: SettledFilter | undefined; limit: number; after: PositionCursor | null },
): { positions: Position[]; next: PositionCursor | null } {
  const markets = cachedMarkets(marketOf);
  const positions: Position[] = [];
  let lastListed: PositionCursor | null = null;
  let lastScanned: PositionCursor | null = null;
  let scanned = 0;
  for (const position of userRfqsNewestFirst(store, userId, page.after)) {
    if (scanned === VIEWS_SCAN_MAX) return { positions, next: positions.length === page.limit ? lastListed : lastScanned };
    scanned++;
    lastScanned = position;
    const record = readRfq(store, position[1]);
    assert.ok(record !== undefined && record.userId === userId, `history row ${position.join(':')} of ${userId} has no RFQ of its user`);
    if (record.status !== 'completed' || record.fill === null) continue;
    const fill = readFill(store, record.fill.makerAddress, record.requestId);
    assert.ok(fill !== undefined, `completed RFQ ${record.requestId} has no fill record`);
    if (!matchesFilter(fill, page.status)) continue;
    // A full page has a next page only if a row it would list follows (contract section 13: null on the last).
    if (positions.length === page.limit) return { positions, next: lastListed };
    positions.push(positionView(record, fill, markets));
    lastListed = position;
  }
  return { positions, next: null };
}

function positionView(record: RfqRecord, fill: FillRecord, marketOf: MarketOf): Position {
  const outcome = settledOutcome(fill, marketOf);
  return {
    request_id: record.requestId,
    created_at_ms: record.createdAtMs,
    legs: legViews(record.legs, marketOf),
    filled_wager_micros: fill.filledWagerMicros,
    odds: fill.oddsE4 / 10_000,
    payout_micros: fill.payoutMicros,
    status: outcome ?? 'open',
    paid_micros: fill.settledPaidMicros,
    settled_at_ms: outcome === null ? null : (fill.settledAtMs ?? null),
  };
}
