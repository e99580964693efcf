// Main thread. The maker's desk (issue 22): stands between the maker gateway and the RFQ engine, both ways,
// in the same synchronous calls (no extra hop). Inbound, it refuses quotes of a tripped protection, keeps the
// quote book (quote-book.ts) and counts the stats (stats.ts) before the RFQ dispatcher routes a message to its
// shard. Outbound, it sees the frames the shards send to makers and learns from the few that matter (a
// reject, a cancel, a last look, a result) what left the book, what filled, and what the protection
// (protection.ts) must count. It decides nothing about an RFQ: the shards do.
//
// Cost: an inbound quote costs a book entry and a clock read; an outbound frame a prefix check, and a
// JSON.parse only for the kinds above (about one per RFQ per quoting maker); a quote_ack, the most common
// frame, is passed through untouched.
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import type {
  DeclineMessage,
  LastLookResponseMessage,
  QuoteCancelMessage,
  QuoteMessage,
  QuoteRejectMessage,
  RfqResultMessage,
  ServerToMakerMessage,
} from '../schemas/mm.js';
import type { WithdrawnQuote } from '../rfq/active-rfq.js';
import type { MakerDispatcher } from './dispatch.js';
import type { MakerGateway } from './gateway.js';
import type { MakerId } from './connection.js';
import type { QuoteBook } from './quote-book.js';
import type { MakerStats } from './stats.js';
import type { Protection } from './protection.js';
import { setBounded } from '../bounded-map.js';

/** What the desk needs of the RFQ engine's dispatcher (rfq/maker-dispatch.ts). */
export interface RfqSide {
  onQuote(makerId: MakerId, address: string, msg: QuoteMessage, receivedAtMs: number): void;
  onDecline(makerId: MakerId, address: string, msg: DeclineMessage): void;
  onQuoteCancel(makerId: MakerId, address: string, msg: QuoteCancelMessage): void;
  onLastLookResponse(makerId: MakerId, address: string, msg: LastLookResponseMessage): void;
  onRfqsReplayed(makerId: MakerId, requestIds: string[]): void;
  onMakerDisconnected(makerId: MakerId): void;
  withdrawQuotes(makerIds: string[]): Promise<WithdrawnQuote[]>;
}

export interface DeskDeps {
  gateway: Pick<MakerGateway, 'broadcast' | 'connectedMakerIds' | 'send' | 'sendFrames' | 'makerIdsOf' | 'addressOf' | 'sendToAddress'>;
  book: QuoteBook;
  stats: MakerStats;
  protection: Protection;
  clock: Clock;
  log: Logger;
}

/** RFQs whose write time is kept for the quote latency; older ones are forgotten (a quote on them is not timed). */
const MAX_TIMED_RFQS = 16_384;

const REJECT = '{"type":"quote_reject",';
const CANCELLED = '{"type":"quote_cancelled",';
const LAST_LOOK = '{"type":"last_look",';
const RESULT = '{"type":"rfq_result",';

export class MakerDesk implements MakerDispatcher {
  #rfq: RfqSide | null = null;
  /** request_id -> performance.now() when its rfq frame was written to the makers' sockets. */
  readonly #rfqWrittenAt = new Map<string, number>();

  constructor(private readonly deps: DeskDeps) {}

  setRfqSide(rfq: RfqSide): void {
    this.#rfq = rfq;
  }

  // --- outbound (the shard pool's MakerFanout) ---------------------------------------------------------

  broadcast(message: ServerToMakerMessage): number {
    if (message.type === 'rfq') setBounded(this.#rfqWrittenAt, message.request_id, performance.now(), MAX_TIMED_RFQS);
    return this.deps.gateway.broadcast(message);
  }

  connectedMakerIds(): string[] {
    return this.deps.gateway.connectedMakerIds();
  }

  send(makerId: string, message: ServerToMakerMessage): boolean {
    return this.deps.gateway.send(makerId, message);
  }

  sendFrames(makerId: string, frames: readonly string[]): boolean {
    for (const frame of frames) {
      if (frame.startsWith(REJECT)) this.#onReject(makerId, frame);
      else if (frame.startsWith(RESULT)) this.#onResult(makerId, JSON.parse(frame) as RfqResultMessage);
      else if (frame.startsWith(CANCELLED) || frame.startsWith(LAST_LOOK)) this.#onBookFrame(makerId, frame);
    }
    return this.deps.gateway.sendFrames(makerId, frames);
  }

  #onReject(makerId: MakerId, frame: string): void {
    const reject = JSON.parse(frame) as Pick<QuoteRejectMessage, 'request_id' | 'quote_id' | 'reason'>;
    // The repeat of a standing quote's id is refused; the standing quote stays.
    if (reject.reason !== 'DUPLICATE_QUOTE_ID') this.deps.book.remove(makerId, reject.request_id, reject.quote_id);
  }

  #onBookFrame(makerId: MakerId, frame: string): void {
    const msg = JSON.parse(frame) as { type: 'quote_cancelled' | 'last_look'; request_id: string; quote_id: string };
    if (msg.type === 'quote_cancelled') return this.deps.book.remove(makerId, msg.request_id, msg.quote_id);
    const quote = this.deps.book.get(makerId, msg.request_id, msg.quote_id);
    if (quote !== undefined) quote.isInLastLook = true;
    const address = this.deps.gateway.addressOf(makerId);
    if (address !== null) this.deps.stats.count(address, 'lastLookOffered', this.deps.clock.nowMs());
  }

  #onResult(makerId: MakerId, result: RfqResultMessage): void {
    // The RFQ has ended: a quote on it now is refused and not timed, so its write time can go (else it lived
    // until MAX_TIMED_RFQS newer ones pushed it out, seconds at 2,000/s: promoted garbage on the main thread).
    this.#rfqWrittenAt.delete(result.request_id);
    const ended = this.deps.book.endRfq(makerId, result.request_id);
    const address = this.deps.gateway.addressOf(makerId);
    if (address === null) return;
    const nowMs = this.deps.clock.nowMs();
    for (const quote of ended) {
      const isConfirmed = result.outcome === 'won' && quote.quoteId === result.quote_id;
      if (quote.isInLastLook && !isConfirmed) this.deps.stats.count(address, 'lastLookRejected', nowMs);
    }
    if (result.outcome !== 'won' || result.filled_wager_micros === undefined || result.odds === undefined) return;
    const wagerMicros = BigInt(result.filled_wager_micros);
    this.deps.stats.fill(address, wagerMicros, nowMs);
    const tripped = this.deps.protection.onFill(address, wagerMicros, nowMs);
    if (tripped === null) return;
    this.deps.log.warn({ address, reason: tripped }, 'maker protection tripped');
    this.deps.gateway.sendToAddress(address, { type: 'protection_tripped', reason: tripped });
    void this.#withdraw(address);
  }

  /** Withdraws every standing quote of `address` in every shard; resolves with how many were withdrawn. */
  async #withdraw(address: string): Promise<number> {
    const makerIds = this.deps.gateway.makerIdsOf(address);
    if (makerIds.length === 0 || this.#rfq === null) return 0;
    const withdrawn = await this.#rfq.withdrawQuotes(makerIds);
    for (const q of withdrawn) this.deps.book.remove(q.makerId, q.requestId, q.quoteId);
    return withdrawn.length;
  }

  // --- inbound (the gateway's MakerDispatcher) ---------------------------------------------------------

  onQuote(makerId: MakerId, address: string, msg: QuoteMessage): void {
    const receivedAtMs = this.deps.clock.nowMs();
    const writtenAt = this.#rfqWrittenAt.get(msg.request_id);
    if (writtenAt !== undefined) this.deps.stats.quoteLatency(address, performance.now() - writtenAt, receivedAtMs);
    else this.deps.stats.count(address, 'quotes', receivedAtMs);
    if (this.deps.protection.trippedOf(address) !== null) {
      this.deps.gateway.send(makerId, {
        type: 'quote_reject',
        request_id: msg.request_id,
        quote_id: msg.quote_id,
        reason: 'PROTECTION_TRIPPED',
      });
      return;
    }
    this.deps.book.add(makerId, address, {
      requestId: msg.request_id,
      quoteId: msg.quote_id,
      odds: msg.odds,
      maxWagerMicros: msg.max_wager_micros,
      isLastLook: msg.last_look === true,
      receivedAtMs,
      isInLastLook: false,
    });
    this.#rfq!.onQuote(makerId, address, msg, receivedAtMs);
  }

  onDecline(makerId: MakerId, address: string, msg: DeclineMessage): void {
    this.deps.stats.count(address, 'declines', this.deps.clock.nowMs());
    this.#rfq!.onDecline(makerId, address, msg);
  }

  onQuoteCancel(makerId: MakerId, address: string, msg: QuoteCancelMessage): void {
    this.#rfq!.onQuoteCancel(makerId, address, msg);
  }

  onLastLookResponse(makerId: MakerId, address: string, msg: LastLookResponseMessage): void {
    this.#rfq!.onLastLookResponse(makerId, address, msg);
  }

  onQuoteCancelAll(makerId: MakerId, address: string): void {
    this.#withdraw(address).then(
      (count) => this.deps.gateway.send(makerId, { type: 'quotes_cancelled', count }),
      (err: unknown) => this.deps.log.error({ err, makerId }, 'quote_cancel_all failed'),
    );
  }

  onProtectionReset(makerId: MakerId, address: string): void {
    this.deps.protection.reset(address);
    this.deps.gateway.send(makerId, { type: 'protection_reset_ok' });
  }

  onRfqsReplayed(makerId: MakerId, requestIds: string[]): void {
    this.#rfq!.onRfqsReplayed(makerId, requestIds);
  }

  onMakerDisconnected(makerId: MakerId): void {
    this.deps.book.dropMaker(makerId);
    this.#rfq?.onMakerDisconnected(makerId);
  }
}
