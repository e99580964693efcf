// Inside an RFQ shard. What the actor holds of an RFQ that is not terminal yet (lost in a crash by design:
// docs/architecture.md, "Where state lives"), and the pure helpers over it.
import type { Timer } from '../clock.js';
import type { Candidate, LiveQuote } from './matching.js';
import type { RfqRecord } from './records.js';

export type Phase = 'quoting' | 'finalizing' | 'closing';

export interface ActiveRfq {
  record: RfqRecord;
  wagerMicros: bigint;
  phase: Phase;
  /** Maker connections the RFQ went to; null until the main thread says (it always does before any quote). */
  audience: Set<string> | null;
  responded: Set<string>;
  quotes: Map<string, LiveQuote>;
  /** Every maker that quoted, standing or not: each hears the result. */
  quoters: Set<string>;
  nextSeq: number;
  timer: Timer | null;
  candidates: Candidate[];
  lastLook: Candidate | null;
  /** Candidates passed over because their maker's collateral no longer covered them (the failure reason). */
  uncoveredCount: number;
  /** Time spent deciding (matching), µs: a stage latency. */
  selectionUs: number;
  /** Commits the create's held write now (persistNew): set while it waits to share the terminal's commit. */
  commitHeldCreate: (() => void) | null;
  /** The create's answer waits for the terminal result (answerWaitMs > 0): the main thread keeps it for that. */
  isAwaitedByCreate: boolean;
}

export const quoteKey = (makerId: string, quoteId: string) => `${makerId}\u0000${quoteId}`;
/**
 * Quotes one maker may have standing on one RFQ (a requote is a new quote_id). Bounds what a maker can make
 * the shard hold; past it a quote gets `quote_reject` QUOTE_LIMIT. A cancelled quote frees its place.
 */
export const MAX_QUOTES_PER_MAKER_PER_RFQ = 16;

/** Pure. How many of `makerId`'s quotes on `rfq` still stand (a maker that quoted before: rare, so a scan). */
export function standingQuotesOf(rfq: ActiveRfq, makerId: string): number {
  let count = 0;
  for (const quote of rfq.quotes.values()) if (quote.makerId === makerId) count++;
  return count;
}
