// Pure. Quote selection (contract section 6, step 4): the best odds at or above the effective minimum, ties to
// the earlier quote; FOK needs one quote that takes the whole wager, IOC fills what the best quote takes.
// The shard actor applies the decision; this module only computes it.
import type { RfqFailureReason } from '../contract/rfq.js';
import { ORDER_TYPE_FOK } from '../contract/order-codec.js';

export interface LiveQuote {
  makerId: string;
  makerAddress: string;
  quoteId: string;
  oddsE4: number;
  maxWagerMicros: bigint;
  isLastLook: boolean;
  /** Arrival order within the RFQ: the time priority of equal odds. */
  seq: number;
}

export interface MatchInput {
  wagerMicros: bigint;
  minOddsE4: number;
  toleranceBps: number;
  orderType: 1 | 2;
  /** Quotes still standing: not cancelled, not withdrawn by a disconnect, not rejected in last look. */
  quotes: readonly LiveQuote[];
  /** Every quote ever received, standing or not: zero means the RFQ timed out rather than failed. */
  quotesReceived: number;
}

export interface Candidate {
  quote: LiveQuote;
  fillWagerMicros: bigint;
}

export type MatchDecision =
  | { kind: 'fill'; candidates: Candidate[] }
  | { kind: 'fail'; reason: Extract<RfqFailureReason, 'NO_ACCEPTABLE_QUOTE' | 'INSUFFICIENT_LIQUIDITY'> }
  | { kind: 'timeout' };

/**
 * Exact, without rounding: odds_e4 ≥ min_odds_e4 × (1 − bps/10000) ⇔ odds_e4 × 10000 ≥ min_odds_e4 × (10000 − bps).
 * Both sides stay below 2^53 (odds_e4 < 2^32, factor ≤ 10000).
 */
export function isAcceptable(oddsE4: number, minOddsE4: number, toleranceBps: number): boolean {
  return oddsE4 * 10_000 >= minOddsE4 * (10_000 - toleranceBps);
}

/** Best first: higher odds, then earlier arrival. */
export function compareQuotes(a: LiveQuote, b: LiveQuote): number {
  return b.oddsE4 - a.oddsE4 || a.seq - b.seq;
}

/** Every acceptable quote in the order they should be tried (the next one is the last-look fallback). */
export function decide(input: MatchInput): MatchDecision {
  if (input.quotesReceived === 0) return { kind: 'timeout' };
  const acceptable = input.quotes.filter((q) => isAcceptable(q.oddsE4, input.minOddsE4, input.toleranceBps));
  if (acceptable.length === 0) return { kind: 'fail', reason: 'NO_ACCEPTABLE_QUOTE' };
  const sized = input.orderType === ORDER_TYPE_FOK ? acceptable.filter((q) => q.maxWagerMicros >= input.wagerMicros) : acceptable;
  if (sized.length === 0) return { kind: 'fail', reason: 'INSUFFICIENT_LIQUIDITY' };
  const candidates = [...sized].sort(compareQuotes).map((quote) => ({
    quote,
    fillWagerMicros: quote.maxWagerMicros < input.wagerMicros ? quote.maxWagerMicros : input.wagerMicros,
  }));
  return { kind: 'fill', candidates };
}
