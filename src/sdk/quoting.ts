// Maker SDK, in the maker's process. What the maker sends about an rfq, checked before it goes: a quote's odds
// and max wager (the server would refuse them with VALIDATION_FAILED, a round trip later), and its quote_id.
import { isQuoteOdds, type QuoteMessage } from '../contract/mm.js';
import { clientErrors } from './errors.js';

export interface QuoteOptions {
  /** Decimal payout multiplier, > 1, at most 4 decimals. */
  odds: number;
  /** Largest wager this price is good for, micros. */
  maxWagerMicros: bigint | number | string;
  /** Ask for a last look before a fill (answered by onLastLook). */
  lastLook?: boolean;
  /** Your own id (1..64 chars); generated when omitted. */
  quoteId?: string;
}

/** The same rule as the schema's PositiveMicrosString: at most 19 digits, so it fits a u64. */
const POSITIVE_MICROS_RE = /^[1-9][0-9]{0,18}$/;

export class QuoteIds {
  #count = 0;

  /** A quote_id unique within this client: a counter, and the time so a restarted client does not repeat one. */
  next(): string {
    return `q${(++this.#count).toString(36)}-${Date.now().toString(36)}`;
  }
}

/** The quote message for `requestId`; throws RangeError for odds or a max wager the server would refuse. */
export function quoteMessage(requestId: string, options: QuoteOptions, ids: QuoteIds): QuoteMessage {
  if (!isQuoteOdds(options.odds)) throw clientErrors.badOdds(options.odds);
  // A number past 2^53 is no longer the integer it was written as: its text would be a rounded wager.
  if (typeof options.maxWagerMicros === 'number' && !Number.isSafeInteger(options.maxWagerMicros)) {
    throw clientErrors.badMaxWager(String(options.maxWagerMicros));
  }
  const maxWagerMicros = String(options.maxWagerMicros);
  if (!POSITIVE_MICROS_RE.test(maxWagerMicros)) throw clientErrors.badMaxWager(maxWagerMicros);
  return {
    type: 'quote',
    request_id: requestId,
    quote_id: options.quoteId ?? ids.next(),
    odds: options.odds,
    max_wager_micros: maxWagerMicros,
    last_look: options.lastLook ?? false,
  };
}
