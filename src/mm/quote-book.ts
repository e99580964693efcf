// Main thread. Each maker's standing quotes, as the main thread sees them (GET /v1/mm/quotes). The
// RFQ shards own the quotes and decide every fill and withdrawal; this is a mirror the desk (desk.ts) keeps
// from the quotes it routes and the shards' answers it forwards, so listing a maker's book needs no call
// into every shard. A quote enters when it is routed to its shard and leaves on its quote_reject,
// quote_cancelled, a withdrawal, its RFQ's rfq_result, or its connection's close.
//
// Bounds: per maker address, what the shards let stand (MAX_QUOTES_PER_MAKER_PER_RFQ per RFQ across its
// sockets, and RFQs are bounded per shard); every entry leaves at the latest with its RFQ's result or its connection's close.
import type { MakerId } from './connection.js';

export interface BookQuote {
  requestId: string;
  quoteId: string;
  odds: number;
  maxWagerMicros: string;
  isLastLook: boolean;
  receivedAtMs: number;
  /** A last_look was sent for it: its RFQ's result tells whether the maker confirmed (stats.ts). */
  isInLastLook: boolean;
}

type QuotesById = Map<string, BookQuote>;
const NO_QUOTES: readonly BookQuote[] = [];

export class QuoteBook {
  /** Connection -> request id -> quote id -> quote. */
  readonly #byMaker = new Map<MakerId, Map<string, QuotesById>>();
  readonly #makersOf = new Map<string, Set<MakerId>>();
  readonly #addressOf = new Map<MakerId, string>();

  /** A quote routed to its shard. A repeated quote id is left as it was (the shard refuses the repeat). */
  add(makerId: MakerId, address: string, quote: BookQuote): void {
    let byRequest = this.#byMaker.get(makerId);
    if (byRequest === undefined) {
      this.#byMaker.set(makerId, (byRequest = new Map()));
      this.#addressOf.set(makerId, address);
      let makers = this.#makersOf.get(address);
      if (makers === undefined) this.#makersOf.set(address, (makers = new Set()));
      makers.add(makerId);
    }
    let quotes = byRequest.get(quote.requestId);
    if (quotes === undefined) byRequest.set(quote.requestId, (quotes = new Map()));
    if (!quotes.has(quote.quoteId)) quotes.set(quote.quoteId, quote);
  }

  get(makerId: MakerId, requestId: string, quoteId: string): BookQuote | undefined {
    return this.#byMaker.get(makerId)?.get(requestId)?.get(quoteId);
  }

  /** One quote left the book (rejected, cancelled, withdrawn). */
  remove(makerId: MakerId, requestId: string, quoteId: string): void {
    const byRequest = this.#byMaker.get(makerId);
    const quotes = byRequest?.get(requestId);
    if (quotes === undefined || !quotes.delete(quoteId)) return;
    if (quotes.size === 0) byRequest!.delete(requestId);
    if (byRequest!.size === 0) this.dropMaker(makerId);
  }

  /**
   * The RFQ ended for this connection: its quotes on it leave, and are returned (the map that held them, out
   * of the book now: no copy, once per quoting maker per RFQ).
   */
  endRfq(makerId: MakerId, requestId: string): Iterable<BookQuote> {
    const byRequest = this.#byMaker.get(makerId);
    const quotes = byRequest?.get(requestId);
    if (quotes === undefined) return NO_QUOTES;
    byRequest!.delete(requestId);
    if (byRequest!.size === 0) this.dropMaker(makerId);
    return quotes.values();
  }

  /** The connection closed: the shards withdrew all its quotes. */
  dropMaker(makerId: MakerId): void {
    if (!this.#byMaker.delete(makerId)) return;
    const address = this.#addressOf.get(makerId)!;
    this.#addressOf.delete(makerId);
    const makers = this.#makersOf.get(address)!;
    makers.delete(makerId);
    if (makers.size === 0) this.#makersOf.delete(address);
  }

  /** Every standing quote of an address (all its connections), oldest first. */
  list(address: string): BookQuote[] {
    const out: BookQuote[] = [];
    for (const makerId of this.#makersOf.get(address) ?? []) {
      for (const quotes of this.#byMaker.get(makerId)!.values()) out.push(...quotes.values());
    }
    return out.sort((a, b) => a.receivedAtMs - b.receivedAtMs);
  }
}
