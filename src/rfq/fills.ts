// Any thread. A fill as the RFQ's record shows it and as its maker's fill is stored (records/fills.ts), from the
// candidate that selection chose.
import type { Candidate } from './matching.js';
import { opaqueTakerId, type FillRecord } from '../records/fills.js';
import { payoutMicros, type RfqFill, type RfqRecord } from '../records/rfqs.js';

/** Pure. The fill of `record` by `candidate` at `nowMs`: as the RFQ's record shows it, and as the maker's fill is stored. */
export function fillOf(record: RfqRecord, candidate: Candidate, nowMs: number): { fill: RfqFill; fillRecord: FillRecord } {
  const fill: RfqFill = {
    makerAddress: candidate.quote.makerAddress,
    quoteId: candidate.quote.quoteId,
    oddsE4: candidate.quote.oddsE4,
    filledWagerMicros: candidate.fillWagerMicros.toString(),
    payoutMicros: payoutMicros(candidate.fillWagerMicros, candidate.quote.oddsE4).toString(),
  };
  const fillRecord: FillRecord = {
    requestId: record.requestId,
    makerAddress: fill.makerAddress,
    quoteId: fill.quoteId,
    taker: record.isShielded ? opaqueTakerId(fill.makerAddress, record.userId) : record.wallet,
    userId: record.userId,
    legs: record.legs,
    filledWagerMicros: fill.filledWagerMicros,
    payoutMicros: fill.payoutMicros,
    oddsE4: fill.oddsE4,
    atMs: nowMs,
    settledPaidMicros: null,
    outcome: null,
    settledAtMs: null,
  };
  return { fill, fillRecord };
}
