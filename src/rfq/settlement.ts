// Main thread. Settles filled RFQ positions when their markets resolve (contract sections 4 and 5): a parlay
// pays payout_micros only if every leg wins (up wins on YES, down on NO); any losing leg pays 0. A voided
// leg voids the position: the filled stake is returned (our decision: without per-leg odds there is no
// fair re-pricing; docs/rfq.md). Settlement is idempotent (a settled fill is skipped inside the transaction
// that would settle it) and re-run at start, so a crash between a market's resolution and this write heals
// on the next start; it is also re-run by a same-outcome retry of the resolve (markets.ts), so a failure at
// run time heals when the operator retries.
import type { Clock } from '../clock.js';
import { Ledger } from '../ledger/ledger.js';
import { marketKey, type Markets } from '../markets/markets.js';
import type { Market } from '../schemas/markets.js';
import type { Store } from '../store/db.js';
import { fillKey, settledFill, type FillRecord } from './fills.js';
import type { RfqLeg, RfqRecord } from './records.js';

export type LegOutcome = 'won' | 'lost' | 'voided' | 'open';

/** Pure. */
export function legOutcome(leg: RfqLeg, market: Market | undefined): LegOutcome {
  if (market === undefined || market.status === 'OPEN') return 'open';
  if (market.status === 'VOIDED') return 'voided';
  const winning = market.outcome === 'YES' ? 'up' : 'down';
  return leg.direction === winning ? 'won' : 'lost';
}

/** Pure: what the taker is paid, or null while a leg that could still decide it is open. */
export function positionPayout(outcomes: readonly LegOutcome[], filledWagerMicros: bigint, payoutMicros: bigint): bigint | null {
  if (outcomes.includes('lost')) return 0n;
  if (outcomes.includes('open')) return null;
  if (outcomes.includes('voided')) return filledWagerMicros;
  return payoutMicros;
}

export class Settlement {
  private readonly ledger: Ledger;

  constructor(
    private readonly store: Store,
    private readonly markets: Markets,
    private readonly clock: Clock,
  ) {
    this.ledger = new Ledger(store);
  }

  /**
   * Reads only this market's unsettled positions (settling removes them from the index), so re-running it
   * for a market already settled, as every same-outcome retry of the resolve does, is one empty range read.
   */
  async onMarketResolved(market: Market): Promise<void> {
    const prefix = `${marketKey(market.market_id)}:`;
    const requestIds = [...this.positions.getKeys({ start: prefix, end: `${prefix}~` })].map((k) => k.slice(prefix.length));
    await Promise.all(requestIds.map((id) => this.settle(id)));
  }

  /** At start: settle whatever resolved while the process was down or crashed mid-way. */
  async settleAllDue(): Promise<void> {
    const requestIds = new Set([...this.positions.getKeys()].map((k) => k.slice(k.indexOf(':') + 1)));
    await Promise.all([...requestIds].map((id) => this.settle(id)));
  }

  private get positions() {
    return this.store.db<true>('openPositions');
  }

  private settle(requestId: string): Promise<void> {
    return this.store.transact(() => {
      const record = this.store.db<RfqRecord>('rfqs').get(requestId);
      if (record?.fill == null) return;
      const fills = this.store.db<FillRecord>('fills');
      const key = fillKey(record.fill.makerAddress, requestId);
      const fill = fills.get(key);
      if (fill === undefined || fill.settledPaidMicros !== null) return;
      const outcomes = record.legs.map((leg) => legOutcome(leg, this.markets.get(leg.marketId)));
      const filledWagerMicros = BigInt(fill.filledWagerMicros);
      const paid = positionPayout(outcomes, filledWagerMicros, BigInt(fill.payoutMicros));
      if (paid === null) return;
      this.ledger.settleAtRiskInTxn(record.userId, filledWagerMicros, paid, `rfq:${requestId}`, this.clock.nowMs());
      void fills.put(key, settledFill(fill, paid));
      for (const leg of record.legs) void this.positions.remove(`${marketKey(leg.marketId)}:${requestId}`);
    });
  }
}
