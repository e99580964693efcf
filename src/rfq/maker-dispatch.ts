// Main thread. Turns validated maker socket messages (from the gateway, mm/gateway.ts) into shard messages,
// synchronously, in the socket callback: no extra hop between a maker's quote and its actor.
import type { MakerDispatcher } from '../mm/gateway.js';
import type { DeclineMessage, LastLookResponseMessage, QuoteCancelMessage, QuoteMessage } from '../schemas/mm.js';
import { oddsToE4 } from './codec.js';
import type { RfqMetrics } from './metrics.js';
import type { ShardPool, MakerFanout } from './shard-pool.js';

export class RfqMakerDispatcher implements MakerDispatcher {
  constructor(
    private readonly pool: ShardPool,
    private readonly makers: MakerFanout,
    private readonly metrics: RfqMetrics,
  ) {}

  onQuote(makerId: string, address: string, msg: QuoteMessage): void {
    // Every quote the maker sent, refused ones included: its quote rate as the maker sees it.
    this.metrics.makerQuotesTotal.inc({ maker: address });
    const oddsE4 = oddsToE4(msg.odds);
    const reject = (reason: string) =>
      this.makers.send(makerId, { type: 'quote_reject', request_id: msg.request_id, quote_id: msg.quote_id, reason });
    // Odds of 1 or less pay the taker nothing over the stake: not a quote.
    if (oddsE4 === null || oddsE4 <= 10_000) return void reject('INVALID_ODDS');
    const routed = this.pool.toShard(msg.request_id, {
      kind: 'quote',
      requestId: msg.request_id,
      makerId,
      makerAddress: address,
      quoteId: msg.quote_id,
      oddsE4,
      maxWagerMicros: msg.max_wager_micros,
      isLastLook: msg.last_look === true,
    });
    if (!routed) reject('RFQ_CLOSED');
  }

  onDecline(makerId: string, _address: string, msg: DeclineMessage): void {
    this.pool.toShard(msg.request_id, { kind: 'decline', requestId: msg.request_id, makerId });
  }

  onQuoteCancel(makerId: string, _address: string, msg: QuoteCancelMessage): void {
    this.pool.toShard(msg.request_id, { kind: 'quote_cancel', requestId: msg.request_id, makerId, quoteId: msg.quote_id });
  }

  onLastLookResponse(makerId: string, address: string, msg: LastLookResponseMessage): void {
    this.metrics.makerLastLookTotal.inc({ maker: address, answer: msg.accept ? 'accepted' : 'rejected' });
    this.pool.toShard(msg.request_id, {
      kind: 'last_look_response',
      requestId: msg.request_id,
      makerId,
      quoteId: msg.quote_id,
      isAccepted: msg.accept,
    });
  }

  onMakerDisconnected(makerId: string): void {
    this.pool.makerDisconnected(makerId);
  }
}
