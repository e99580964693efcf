// Inside an RFQ shard. What the actor holds of an RFQ that is not terminal yet (lost in a crash by design:
// docs/architecture.md, "Where state lives"), and the pure helpers over it.
import type { Timer } from '../lib/clock.js';
import type { Candidate, LiveQuote } from './matching.js';
import type { RfqRecord } from '../records/rfqs.js';

export type Phase = 'quoting' | 'finalizing' | 'closing';

export interface ActiveRfq {
  record: RfqRecord;
  wagerMicros: bigint;
  phase: Phase;
  /** Maker connections the RFQ went to; null until the main thread says (it always does before any quote). */
  audience: Set<string> | null;
  responded: Set<string>;
  /**
   * Audience members that have not answered: the early close waits for none. A count, kept by the helpers
   * below: walking the audience at every answer cost O(makers²) per RFQ when answers came in audience order.
   */
  awaitingCount: number;
  quotes: Map<string, LiveQuote>;
  /** Every maker that quoted, standing or not: each hears the result. */
  quoters: Set<string>;
  nextSeq: number;
  timer: Timer | null;
  candidates: Candidate[];
  lastLook: Candidate | null;
  /** The candidate whose fill is being made durable (finalization.ts commitFill); null otherwise. */
  filling: Candidate | null;
  /** The deadline_ms of the last look offered last, as its maker was told (0 before any); read only while it is pending. */
  lastLookDeadlineMs: number;
  /** When its first last look was offered (last-look.ts bounds the time from then); null before. */
  firstLastLookAtMs: number | null;
  /** Last looks offered per maker address; null until the first (most RFQs fill a firm quote). */
  lastLooksByMaker: Map<string, number> | null;
  /** Candidates passed over because their maker's collateral no longer covered them (the failure reason). */
  uncoveredCount: number;
  /** Their makers, who hear `lost` whatever the end (contract section 11); null until one is passed over. */
  uncoveredMakerIds: Set<string> | null;
  /** performance.now() when the actor took it on, just before its `rfq` frame left for the makers. */
  announcedAtMs: number;
  /** From then to the close of quoting, µs (a stage latency: the makers' round trip); null until it closes. */
  quotingUs: number | null;
  /** Time spent deciding (matching), µs: a stage latency. */
  selectionUs: number;
  /** Commits the create's held write now (persistNew): set while it waits to share the terminal's commit. */
  commitHeldCreate: (() => void) | null;
  /** The create's answer waits for the terminal result (answerWaitMs > 0): the main thread keeps it for that. */
  isAwaitedByCreate: boolean;
}

/** A new RFQ as the actor holds it: quoting, with no audience yet, until `timer` closes its quote window. */
export function newActiveRfq(record: RfqRecord, timer: Timer | null, isAwaitedByCreate: boolean): ActiveRfq {
  return {
    record,
    wagerMicros: BigInt(record.wagerMicros),
    phase: 'quoting',
    audience: null,
    responded: new Set(),
    awaitingCount: 0,
    quotes: new Map(),
    quoters: new Set(),
    nextSeq: 0,
    timer,
    candidates: [],
    lastLook: null,
    filling: null,
    lastLookDeadlineMs: 0,
    firstLastLookAtMs: null,
    lastLooksByMaker: null,
    uncoveredCount: 0,
    uncoveredMakerIds: null,
    announcedAtMs: performance.now(),
    quotingUs: null,
    selectionUs: 0,
    commitHeldCreate: null,
    isAwaitedByCreate,
  };
}

/** Applied in place: the main thread named (more) connections the RFQ went to. */
export function addAudience(rfq: ActiveRfq, makerIds: readonly string[]): void {
  const audience = (rfq.audience ??= new Set());
  for (const makerId of makerIds) {
    if (audience.has(makerId)) continue;
    audience.add(makerId);
    if (!rfq.responded.has(makerId)) rfq.awaitingCount++;
  }
}

/** Applied in place: `makerId` answered (a quote, a refusal that counts as an answer, a decline). */
export function markResponded(rfq: ActiveRfq, makerId: string): void {
  if (rfq.responded.has(makerId)) return;
  rfq.responded.add(makerId);
  if (rfq.audience?.has(makerId) === true) rfq.awaitingCount--;
}

/** Applied in place: `makerId`'s connection closed; true when it was in the audience. */
export function removeFromAudience(rfq: ActiveRfq, makerId: string): boolean {
  if (rfq.audience?.delete(makerId) !== true) return false;
  if (!rfq.responded.has(makerId)) rfq.awaitingCount--;
  return true;
}

/** Every audience member answered (and the audience is known). */
export const hasAllResponded = (rfq: ActiveRfq): boolean => rfq.audience !== null && rfq.awaitingCount === 0;

/** Applied in place: `candidate` was passed over because its maker's collateral no longer covers it. */
export function passOverUncovered(rfq: ActiveRfq, candidate: Candidate): void {
  rfq.uncoveredCount++;
  (rfq.uncoveredMakerIds ??= new Set()).add(candidate.quote.makerId);
}

export const quoteKey = (makerId: string, quoteId: string) => `${makerId}\u0000${quoteId}`;
/**
 * Quotes one maker address may have standing on one RFQ, across all its sockets (a requote is a new
 * quote_id). Bounds what a maker can make the shard hold, and the last-look candidates it can line up; past
 * it a quote gets `quote_reject` QUOTE_LIMIT. A cancelled quote frees its place.
 */
export const MAX_QUOTES_PER_MAKER_PER_RFQ = 16;

/**
 * Pure. Whether `makerAddress` has its whole share of quotes standing on `rfq`. Fewer quotes than the share
 * on the RFQ in all (nearly always) answers without a look; else a scan of at most the RFQ's quotes.
 */
export function isAtQuoteLimit(rfq: ActiveRfq, makerAddress: string): boolean {
  if (rfq.quotes.size < MAX_QUOTES_PER_MAKER_PER_RFQ) return false;
  let count = 0;
  for (const quote of rfq.quotes.values()) if (quote.makerAddress === makerAddress) count++;
  return count >= MAX_QUOTES_PER_MAKER_PER_RFQ;
}

/** A quote the actor withdrew at its maker's request (quote_cancel_all, or a tripped protection). */
export interface WithdrawnQuote {
  makerId: string;
  requestId: string;
  quoteId: string;
}

/**
 * Pure decision, applied in place: withdraws `makerId`'s quote `quoteId` from `rfq` if it still stands; false
 * when it does not. A quote stands until it is selected: once it is in last look or its fill is being written,
 * the fill is the one to tell, so no quote is both cancelled and filled. The others stand while a fill is
 * written (it may be refused UNCOVERED, and selection goes on to them), and not once another end is decided.
 */
export function withdrawQuote(rfq: ActiveRfq, makerId: string, quoteId: string): boolean {
  // Closing is an end being decided or written; only while a fill is written may it come back to selection
  // (the maker's owner refused it), so only then do the other quotes still stand.
  if (rfq.phase === 'closing' && rfq.filling === null) return false;
  const key = quoteKey(makerId, quoteId);
  const offered = rfq.lastLook?.quote ?? rfq.filling?.quote;
  if (offered !== undefined && offered.makerId === makerId && offered.quoteId === quoteId) return false;
  if (!rfq.quotes.delete(key)) return false;
  if (rfq.candidates.length > 0) rfq.candidates = rfq.candidates.filter((c) => quoteKey(c.quote.makerId, c.quote.quoteId) !== key);
  return true;
}

/** Withdraws every standing quote of `makerIds` on `rfqs` (withdrawQuote's rule); returns what it withdrew. */
export function withdrawQuotesOf(rfqs: Iterable<ActiveRfq>, makerIds: ReadonlySet<string>): WithdrawnQuote[] {
  const withdrawn: WithdrawnQuote[] = [];
  for (const rfq of rfqs) {
    for (const quote of [...rfq.quotes.values()]) {
      if (!makerIds.has(quote.makerId)) continue;
      if (withdrawQuote(rfq, quote.makerId, quote.quoteId)) {
        withdrawn.push({ makerId: quote.makerId, requestId: rfq.record.requestId, quoteId: quote.quoteId });
      }
    }
  }
  return withdrawn;
}
