// Main thread. The maker's desk: stands between the maker gateway and the RFQ engine, both ways,
// in the same synchronous calls (no extra hop). Inbound, it refuses quotes of a tripped protection, keeps the
// quote book (quote-book.ts) and counts the stats (stats.ts) before the RFQ dispatcher routes a message to its
// shard. Outbound, it passes on the frames the shards send to makers and learns, from the typed facts the
// shards send beside them (facts.ts: a quote left the book, a last look, an RFQ's end), what left the book,
// what filled, and what the protection (protection.ts) must count. It decides nothing about an RFQ: the
// shards do, and it never parses a frame.
//
// Cost: an inbound quote costs a book entry and a clock read; an outbound frame nothing, a fact a switch and
// a book lookup (about one per RFQ per quoting maker); a quote_ack, the most common frame, carries none.
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import type { DeclineMessage, LastLookResponseMessage, QuoteCancelMessage, QuoteMessage, ServerToMakerMessage } from '../contract/mm.js';
import type { WithdrawnQuote } from '../rfq/active-rfq.js';
import type { MakerDispatcher } from './dispatch.js';
import type { MakerGateway } from './gateway.js';
import type { MakerId } from './connection.js';
import type { MakerFact } from '../rfq/maker-facts.js';
import type { QuoteBook } from './quote-book.js';
import type { MakerStats } from './stats.js';
import type { Protection } from './protection.js';
import type { ProtectionTripReason } from '../contract/mm-stream.js';
import { setBounded } from '../lib/bounded-map.js';
import { isOverloaded, OverloadRetries } from '../lib/overload-retries.js';

/** What the desk needs of the RFQ engine's dispatcher (rfq/maker-dispatch.ts). */
export interface RfqSide {
  /** False when the quote was refused before reaching a shard (its request id names none): it joins no book. */
  onQuote(makerId: MakerId, address: string, msg: QuoteMessage, receivedAtMs: number): boolean;
  onDecline(makerId: MakerId, address: string, msg: DeclineMessage): void;
  onQuoteCancel(makerId: MakerId, address: string, msg: QuoteCancelMessage): void;
  onLastLookResponse(makerId: MakerId, address: string, msg: LastLookResponseMessage, receivedAtMs: number): void;
  onRfqsReplayed(makerId: MakerId, requestIds: string[]): void;
  onMakerDisconnected(makerId: MakerId): void;
  withdrawQuotes(makerIds: string[]): Promise<WithdrawnQuote[]>;
}

export interface DeskDeps {
  /** The RFQ engine's side of the desk: the shards, reached through their dispatcher. */
  rfq: RfqSide;
  gateway: Pick<
    MakerGateway,
    'broadcast' | 'connectedMakerIds' | 'hasAuthenticated' | 'send' | 'sendFrames' | 'makerIdsOf' | 'addressOf' | 'sendToAddress'
  >;
  book: QuoteBook;
  stats: MakerStats;
  protection: Protection;
  clock: Clock;
  log: Logger;
}

/** RFQs whose write time is kept for the quote latency; older ones are forgotten (a quote on them is not timed). */
const MAX_TIMED_RFQS = 16_384;

export class MakerDesk implements MakerDispatcher {
  /** request_id -> performance.now() when its rfq frame was written to the makers' sockets. */
  readonly #rfqWrittenAt = new Map<string, number>();
  /** A tripped maker's quote withdrawal the shards refused (overloaded), asked again until it is done. */
  readonly #withdrawRetries = new OverloadRetries<string>();

  constructor(private readonly deps: DeskDeps) {}

  // --- outbound (the shard pool's MakerFanout) ---------------------------------------------------------

  broadcast(message: ServerToMakerMessage): number {
    if (message.type === 'rfq') setBounded(this.#rfqWrittenAt, message.request_id, performance.now(), MAX_TIMED_RFQS);
    return this.deps.gateway.broadcast(message);
  }

  connectedMakerIds(): string[] {
    return this.deps.gateway.connectedMakerIds();
  }

  hasConnectedMakers(): boolean {
    return this.deps.gateway.hasAuthenticated;
  }

  send(makerId: string, message: ServerToMakerMessage): boolean {
    return this.deps.gateway.send(makerId, message);
  }

  /**
   * The facts first, then the frames, as one connection's frames of a turn (shard-pool.ts): a protection
   * that a fill trips is told before the frames of that turn are written.
   */
  sendFrames(makerId: string, frames: readonly string[], facts: readonly MakerFact[], unreplayed: readonly number[] | null): boolean {
    for (const fact of facts) this.#onFact(makerId, fact);
    return this.deps.gateway.sendFrames(makerId, frames, unreplayed);
  }

  #onFact(makerId: MakerId, told: MakerFact): void {
    switch (told.fact) {
      case 'quote_left':
        return this.deps.book.remove(makerId, told.requestId, told.quoteId);
      case 'last_look':
        return this.#onLastLook(makerId, told.requestId, told.quoteId);
      case 'rfq_ended':
        return this.#onRfqEnded(makerId, told.requestId, told.filledQuoteId, told.filledWagerMicros);
      default: {
        const unknown: never = told;
        throw new Error(`unknown maker fact ${JSON.stringify(unknown)}`);
      }
    }
  }

  #onLastLook(makerId: MakerId, requestId: string, quoteId: string): void {
    const quote = this.deps.book.get(makerId, requestId, quoteId);
    if (quote !== undefined) quote.isInLastLook = true;
    const address = this.deps.gateway.addressOf(makerId);
    if (address !== null) this.deps.stats.count(address, 'lastLookOffered', this.deps.clock.nowMs());
  }

  #onRfqEnded(makerId: MakerId, requestId: string, filledQuoteId: string | null, filledWagerMicros: string | null): void {
    // The RFQ has ended: a quote on it now is refused and not timed, so its write time can go (else it lived
    // until MAX_TIMED_RFQS newer ones pushed it out, seconds at 2,000/s: promoted garbage on the main thread).
    this.#rfqWrittenAt.delete(requestId);
    let lastLooksRejected = 0;
    for (const quote of this.deps.book.endRfq(makerId, requestId)) {
      if (quote.isInLastLook && quote.quoteId !== filledQuoteId) lastLooksRejected++;
    }
    // Most ends are a plain loss: nothing to count, no lookup.
    if (lastLooksRejected === 0 && filledWagerMicros === null) return;
    const address = this.deps.gateway.addressOf(makerId);
    if (address === null) return;
    const nowMs = this.deps.clock.nowMs();
    for (let i = 0; i < lastLooksRejected; i++) this.deps.stats.count(address, 'lastLookRejected', nowMs);
    if (filledWagerMicros === null) return;
    const wagerMicros = BigInt(filledWagerMicros);
    this.deps.stats.fill(address, wagerMicros, nowMs);
    const tripped = this.deps.protection.onFill(address, wagerMicros, nowMs);
    if (tripped instanceof Promise) void tripped.then((reason) => reason !== null && this.#trip(address, reason));
    else if (tripped !== null) this.#trip(address, tripped);
  }

  #trip(address: string, reason: ProtectionTripReason): void {
    this.deps.log.warn({ address, reason }, 'maker protection tripped');
    this.deps.gateway.sendToAddress(address, { type: 'protection_tripped', reason });
    const failed = (err: unknown) => this.deps.log.error({ err, address }, 'protection withdraw failed');
    // A shard at its limit of outstanding calls refuses (OVERLOADED): the tripped maker's standing quotes must
    // still go, so the withdrawal is asked again, rather than the rejection stopping the process unhandled.
    this.#withdraw(address).catch((err: unknown) =>
      isOverloaded(err) ? this.#withdrawRetries.retry(address, () => this.#withdraw(address), failed) : failed(err),
    );
  }

  /** Withdraws every standing quote of `address` in every shard; resolves with how many were withdrawn. */
  async #withdraw(address: string): Promise<number> {
    const makerIds = this.deps.gateway.makerIdsOf(address);
    if (makerIds.length === 0) return 0;
    const withdrawn = await this.deps.rfq.withdrawQuotes(makerIds);
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
    // Into the book once it reached its shard: a quote refused before (its request id names no shard) never
    // hears of that shard again, so it would stand until its connection closed.
    if (!this.deps.rfq.onQuote(makerId, address, msg, receivedAtMs)) return;
    this.deps.book.add(makerId, address, {
      requestId: msg.request_id,
      quoteId: msg.quote_id,
      odds: msg.odds,
      maxWagerMicros: msg.max_wager_micros,
      isLastLook: msg.last_look === true,
      receivedAtMs,
      isInLastLook: false,
    });
  }

  onDecline(makerId: MakerId, address: string, msg: DeclineMessage): void {
    this.deps.stats.count(address, 'declines', this.deps.clock.nowMs());
    this.deps.rfq.onDecline(makerId, address, msg);
  }

  onQuoteCancel(makerId: MakerId, address: string, msg: QuoteCancelMessage): void {
    this.deps.rfq.onQuoteCancel(makerId, address, msg);
  }

  onLastLookResponse(makerId: MakerId, address: string, msg: LastLookResponseMessage): void {
    this.deps.rfq.onLastLookResponse(makerId, address, msg, this.deps.clock.nowMs());
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
    this.deps.rfq.onRfqsReplayed(makerId, requestIds);
  }

  onMakerDisconnected(makerId: MakerId): void {
    this.deps.book.dropMaker(makerId);
    this.deps.rfq.onMakerDisconnected(makerId);
  }
}
