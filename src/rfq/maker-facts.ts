// Both threads: made in an RFQ shard (rfq/shard.ts, where a message to a maker is serialized), read by the
// desk on the main thread (desk.ts). What the desk must learn from a message the shard sends one maker
// connection: a quote left the book, a last look was offered, the RFQ ended (and what filled). Its fields
// travel beside the frame in the shard's `to_maker` event itself (rfq/messages.ts), so the main thread never
// parses JSON it wrote to learn them, and the desk is handed that event: nothing is allocated on main.
// Pure; a quote_ack, the most common frame, carries none.
//
// Cost across the worker port (bench/micro/maker-frames.ts, one RFQ's 20 frames at 10 makers): the main
// thread reads them with their facts in ~7.6 µs where the frames alone, with the prefix checks and JSON.parse
// this replaces, took ~10.3 µs; as a nested object per fact, ~9.2 µs (its keys are cloned per event), hence
// flat fields. The shard pays for it: its serialization of those frames, ~14.5 µs, becomes ~16.3 µs.
import type { ServerToMakerMessage } from '../contract/mm.js';

export type MakerFact =
  /** The quote left the shard's book: refused (any reason but DUPLICATE_QUOTE_ID, which leaves the standing one) or cancelled. */
  | { fact: 'quote_left'; requestId: string; quoteId: string }
  /** A last look was offered on the quote: the RFQ's end tells whether the maker confirmed it. */
  | { fact: 'last_look'; requestId: string; quoteId: string }
  /**
   * The RFQ ended for this connection. `filledQuoteId` and `filledWagerMicros`: the quote of this connection
   * that filled and the wager it filled; both null when it did not win.
   */
  | { fact: 'rfq_ended'; requestId: string; filledQuoteId: string | null; filledWagerMicros: string | null };

/** A message that carries no fact (a quote_ack, an error): the event has no `fact` field. */
export interface NoFact {
  fact?: undefined;
}

/** The fact a message to a maker carries for the desk, or null (quote_ack, error, ...). */
export function makerFactOf(message: ServerToMakerMessage): MakerFact | null {
  switch (message.type) {
    case 'quote_reject':
      // The repeat of a standing quote's id is refused; the standing quote stays in the book.
      if (message.reason === 'DUPLICATE_QUOTE_ID') return null;
      return { fact: 'quote_left', requestId: message.request_id, quoteId: message.quote_id };
    case 'quote_cancelled':
      return { fact: 'quote_left', requestId: message.request_id, quoteId: message.quote_id };
    case 'last_look':
      return { fact: 'last_look', requestId: message.request_id, quoteId: message.quote_id };
    case 'rfq_result': {
      const isFill = message.outcome === 'won' && message.quote_id !== undefined && message.filled_wager_micros !== undefined;
      return {
        fact: 'rfq_ended',
        requestId: message.request_id,
        filledQuoteId: isFill ? message.quote_id! : null,
        filledWagerMicros: isFill ? message.filled_wager_micros! : null,
      };
    }
    default:
      return null;
  }
}
