// Pure. Whether a last-look quote may be offered to its maker now, and until when (contract section 6 step 5).
// A last look is a free option for its maker while it runs: an RFQ whose makers never answer
// is held `finalizing`, its taker's wager reserved, for as long as the service keeps asking. Three bounds:
//   - the order's expiry: past it nobody is asked (a plain quote still fills);
//   - the RFQ's time in last looks: `maxFinalizingMs` from the first offer. Past it no maker is asked again,
//     and a running last look ends at it, so the best firm quote left fills, or the RFQ ends as with no
//     quote left (MAKER_REJECTED: silence is a reject);
//   - offers per maker address on one RFQ: MAX_LAST_LOOKS_PER_MAKER_PER_RFQ, however many sockets or quotes
//     it has, so one maker cannot spend the whole bound alone.
// The shard's finalization (finalization.ts) applies the decision; the clock is its argument.

/**
 * Last looks one maker address is offered on one RFQ. Two, not one: a maker that rejects its best price may
 * still confirm its next one (a lower price suits it better), and a third offer would mostly feed a maker
 * that answers nothing.
 */
export const MAX_LAST_LOOKS_PER_MAKER_PER_RFQ = 2;

export interface LastLookInput {
  nowMs: number;
  lastLookMs: number;
  /** The order's expiry. */
  expiresAtMs: number;
  maxFinalizingMs: number;
  /** When the RFQ's first last look was offered; null before any. */
  firstOfferAtMs: number | null;
  /** Last looks already offered to this quote's maker address on this RFQ. */
  offersToMaker: number;
}

export type LastLookDecision =
  | { kind: 'offer'; deadlineMs: number }
  /** past_expiry and past_bound pass over every last-look quote left; maker_limit only this maker's. */
  | { kind: 'pass'; reason: 'past_expiry' | 'past_bound' | 'maker_limit' };

export function decideLastLook(input: LastLookInput): LastLookDecision {
  const { nowMs } = input;
  if (nowMs >= input.expiresAtMs) return { kind: 'pass', reason: 'past_expiry' };
  const boundMs = (input.firstOfferAtMs ?? nowMs) + input.maxFinalizingMs;
  if (nowMs >= boundMs) return { kind: 'pass', reason: 'past_bound' };
  if (input.offersToMaker >= MAX_LAST_LOOKS_PER_MAKER_PER_RFQ) return { kind: 'pass', reason: 'maker_limit' };
  return { kind: 'offer', deadlineMs: Math.min(nowMs + input.lastLookMs, input.expiresAtMs, boundMs) };
}
