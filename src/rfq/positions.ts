// Any thread; pure. How a filled parlay's outcome is decided from its legs' markets (contract section 11,
// "Settlement"): a parlay pays payout_micros only if every leg wins (up wins on YES, down on NO); any lost
// leg decides it lost at once, even with other legs open; otherwise, once every leg is final with at least
// one voided, the stake is returned (no fair re-pricing without per-leg odds; docs/rfq.md).
import type { Market } from '../contract/markets.js';
import type { PositionOutcome } from '../records/ledger.js';
import type { RfqLeg } from '../records/rfqs.js';

export type LegOutcome = 'won' | 'lost' | 'voided' | 'open';

/** Reads only status and outcome, which every stored market has (StoredMarket lacks only oracle fields). */
export function legOutcome(leg: RfqLeg, market: Pick<Market, 'status' | 'outcome'> | undefined): LegOutcome {
  if (market === undefined || market.status === 'OPEN') return 'open';
  if (market.status === 'VOIDED') return 'voided';
  const winning = market.outcome === 'YES' ? 'up' : 'down';
  return leg.direction === winning ? 'won' : 'lost';
}

/** How the position ended, or null while a leg that could still decide it is open. */
export function positionOutcome(outcomes: readonly LegOutcome[]): PositionOutcome | null {
  if (outcomes.includes('lost')) return 'lost';
  if (outcomes.includes('open')) return null;
  if (outcomes.includes('voided')) return 'voided';
  return 'won';
}

/** What the taker is paid: nothing when it lost, its stake back when voided, payout_micros when it won. */
export function positionPayout(outcome: PositionOutcome, filledWagerMicros: bigint, payoutMicros: bigint): bigint {
  if (outcome === 'lost') return 0n;
  return outcome === 'voided' ? filledWagerMicros : payoutMicros;
}
