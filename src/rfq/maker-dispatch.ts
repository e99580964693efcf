// Main thread. Turns validated maker socket messages (from the gateway, mm/gateway.ts) into shard messages,
// synchronously, in the socket callback: no extra hop between a maker's quote and its actor.
import { ODDS_MAX, quoteOddsE4 } from '../contract/mm.js';
import type { DeclineMessage, LastLookResponseMessage, QuoteCancelMessage, QuoteMessage, QuoteRejectReason } from '../contract/mm.js';
import type { RfqMetrics } from './metrics.js';
import { makerError } from '../contract/maker-protocol.js';
import type { ShardPool, MakerFanout } from './shard-pool.js';

/**
 * The RFQ engine's half of the gateway's MakerDispatcher; mm/desk.ts (the maker's quote book, protection
 * and stats) stands in front of it.
 */
export class RfqMakerDispatcher {
  constructor(
    private readonly pool: ShardPool,
    /** Answers to a maker that need no shard (a quote refused before routing): straight to its socket. */
    private readonly makers: Pick<MakerFanout, 'send'>,
    private readonly metrics: RfqMetrics,
  ) {}

  /**
   * `msg` passed its compiled schema (mm/inbound.ts), odds included: it goes to its shard as one message,
   * built here field by field. `receivedAtMs`: when the socket's frame was read (quote_ack
   * received_at_ms). False when it was refused here (RFQ_CLOSED: its request id names no shard).
   */
  onQuote(makerId: string, address: string, msg: QuoteMessage, receivedAtMs: number): boolean {
    // Every quote the maker sent, refused ones included: its quote rate as the maker sees it.
    this.metrics.makerQuotesTotal.inc({ maker: address });
    const oddsE4 = quoteOddsE4(msg.odds);
    // Odds of 1 or less pay the taker nothing over the stake: not a quote. (The schema refuses them first.)
    if (!(oddsE4 > 10_000 && oddsE4 <= ODDS_MAX * 10_000)) return this.rejectQuote(makerId, msg, 'INVALID_ODDS');
    const routed = this.pool.toShard(msg.request_id, {
      kind: 'quote',
      requestId: msg.request_id,
      makerId,
      makerAddress: address,
      quoteId: msg.quote_id,
      oddsE4,
      maxWagerMicros: msg.max_wager_micros,
      isLastLook: msg.last_look === true,
      receivedAtMs,
    });
    return routed || this.rejectQuote(makerId, msg, 'RFQ_CLOSED');
  }

  private rejectQuote(makerId: string, msg: QuoteMessage, reason: QuoteRejectReason): false {
    this.makers.send(makerId, { type: 'quote_reject', request_id: msg.request_id, quote_id: msg.quote_id, reason });
    return false;
  }

  onDecline(makerId: string, _address: string, msg: DeclineMessage): void {
    this.pool.toShard(msg.request_id, { kind: 'decline', requestId: msg.request_id, makerId });
  }

  onQuoteCancel(makerId: string, _address: string, msg: QuoteCancelMessage): void {
    const routed = this.pool.toShard(msg.request_id, { kind: 'quote_cancel', requestId: msg.request_id, makerId, quoteId: msg.quote_id });
    // An id no shard could have minted names no quote: answered here, as the shard answers an unknown one.
    if (!routed) this.makers.send(makerId, makerError('QUOTE_NOT_FOUND', msg.request_id, msg.quote_id));
  }

  /** `receivedAtMs`: when the socket's frame was read, held against the last look's deadline_ms by the shard. */
  onLastLookResponse(makerId: string, address: string, msg: LastLookResponseMessage, receivedAtMs: number): void {
    this.metrics.makerLastLookTotal.inc({ maker: address, answer: msg.accept ? 'accepted' : 'rejected' });
    this.pool.toShard(msg.request_id, {
      kind: 'last_look_response',
      requestId: msg.request_id,
      makerId,
      quoteId: msg.quote_id,
      isAccepted: msg.accept,
      receivedAtMs,
    });
  }

  /** A resume replayed these rfqs to `makerId`: it joins their audience, so its quotes on them count. */
  onRfqsReplayed(makerId: string, requestIds: string[]): void {
    for (const requestId of requestIds) this.pool.toShard(requestId, { kind: 'audience', requestId, makerIds: [makerId] });
  }

  /** Withdraws every standing quote of these connections, in every shard; resolves with what was withdrawn. */
  withdrawQuotes(makerIds: string[]) {
    return this.pool.withdrawQuotes(makerIds);
  }

  onMakerDisconnected(makerId: string): void {
    this.pool.makerDisconnected(makerId);
  }
}
