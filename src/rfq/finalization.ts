// Inside an RFQ shard: an RFQ from the close of its quoting to its durable end. Selection (matching.ts), the
// last look, the fill or another end made durable through RfqDurability, and the makers and main thread told once
// it is. The actor (shard.ts) takes the messages and hands an RFQ here when its quoting closes (every
// audience maker answered, or the quote window ran out), when a last look is answered, or when it is
// cancelled. State stays the actor's: the RFQs it holds are `active`, which this module shares.
import type { TimerClock } from '../lib/clock.js';
import { isOpenForBetting, readStoredMarket } from '../markets/market-table.js';
import type { ServerToMakerMessage } from '../contract/mm.js';
import type { Store } from '../store/db.js';
import { passOverUncovered, type ActiveRfq } from './active-rfq.js';
import { fillOf } from './fills.js';
import { decideLastLook } from './last-look.js';
import { decide, type Candidate } from './matching.js';
import type { ShardToMain } from './messages.js';
import { endedRecord, payoutMicros, toRfqResult, type FailureReason, type TerminalStatus } from '../records/rfqs.js';
import { UNCOVERED, type RfqDurability, type WrittenEnd } from './rfq-durability.js';

export type ToMaker = (makerId: string, message: ServerToMakerMessage) => void;

export interface FinalizationDeps {
  store: Store;
  durability: RfqDurability;
  clock: TimerClock;
  lastLookMs: number;
  /** Longest an RFQ spends in last looks, from its first offer (last-look.ts). */
  maxFinalizingMs: number;
  /** The actor's RFQs that are not terminal, by request id. */
  active: Map<string, ActiveRfq>;
  /** Those whose end is being made durable (persistTerminal), by request id. */
  closing: Map<string, ActiveRfq>;
  emit(message: ShardToMain): void;
  toMaker: ToMaker;
}

export class RfqFinalization {
  constructor(private readonly deps: FinalizationDeps) {}

  /** Quoting is over: selects among the quotes and goes on to the fill, a last look, or another end. */
  close(rfq: ActiveRfq): void {
    if (rfq.phase !== 'quoting') return;
    rfq.phase = 'closing';
    this.clearTimer(rfq);
    rfq.quotingUs = Math.round((performance.now() - rfq.announcedAtMs) * 1000);
    const startNs = process.hrtime.bigint();
    const decision = decide({
      wagerMicros: rfq.wagerMicros,
      minOddsE4: rfq.record.minOddsE4,
      toleranceBps: rfq.record.toleranceBps,
      orderType: rfq.record.orderType,
      quotes: [...rfq.quotes.values()],
      quotesReceived: rfq.record.quotesReceived,
    });
    rfq.selectionUs = Number(process.hrtime.bigint() - startNs) / 1000;
    if (decision.kind === 'timeout') return void this.finish(rfq, 'timeout', null);
    if (decision.kind === 'fail') return void this.finish(rfq, 'failed', decision.reason);
    if (!this.areLegsOpen(rfq, this.deps.clock.nowMs())) return void this.finish(rfq, 'failed', 'MARKET_CLOSED');
    rfq.candidates = decision.candidates;
    this.offerNext(rfq);
  }

  /** The maker of the quote in last look accepted it (a fill) or not (the next candidate); once per offer. */
  endLastLook(rfq: ActiveRfq, isAccepted: boolean): void {
    const candidate = rfq.lastLook;
    if (candidate === null) return;
    rfq.lastLook = null;
    this.clearTimer(rfq);
    if (isAccepted) return void this.commitFill(rfq, candidate);
    this.offerNext(rfq);
  }

  /** Every non-fill end: the whole reservation is released in the same transaction as the status. */
  async finish(rfq: ActiveRfq, status: Exclude<TerminalStatus, 'completed'>, error: FailureReason | null): Promise<void> {
    rfq.phase = 'closing';
    this.clearTimer(rfq);
    const nowMs = this.deps.clock.nowMs();
    const ended = endedRecord(rfq.record, { status, fill: null, error, terminalAtMs: nowMs });
    const written = await this.persistTerminal(rfq, () => this.deps.durability.release(rfq, ended));
    if (written === null) return;
    rfq.record = written.record;
    this.retire(rfq, written.persistUs, status === 'cancelled' ? 'cancelled' : 'expired');
  }

  /** The maker's available, as this thread last saw it, covers the liability of a fill of `wagerMicros`. */
  canCover(makerAddress: string, wagerMicros: bigint, oddsE4: number): boolean {
    return this.deps.durability.makerAvailable(makerAddress) >= payoutMicros(wagerMicros, oddsE4) - wagerMicros;
  }

  clearTimer(rfq: ActiveRfq): void {
    if (rfq.timer !== null) this.deps.clock.clearTimer(rfq.timer);
    rfq.timer = null;
  }

  /**
   * Every leg's market still takes bets at `nowMs`. Outside a transaction it reads this thread's snapshot (a
   * market closed ~1 ms ago may still look open); inside the fill's transaction it reads the latest commit,
   * which is what decides (commitFill).
   */
  private areLegsOpen(rfq: ActiveRfq, nowMs: number): boolean {
    return rfq.record.legs.every((leg) => {
      const market = readStoredMarket(this.deps.store, leg.marketId);
      return market !== undefined && isOpenForBetting(market, nowMs);
    });
  }

  /**
   * Tries candidates best first: a plain quote fills at once, a last-look quote asks its maker first. Past
   * the order's expiry there is no time left to ask a maker, so last-look quotes are passed over; a plain
   * quote still fills, because it stood at selection and needs no answer (contract section 6: a reject or
   * silence moves to the next acceptable quote). The same past the RFQ's bound on time in last looks, and
   * for a maker offered its share already (last-look.ts). With none left, a signed order ends ORDER_EXPIRED
   * past its expiry (a last look ran out with it), else MAKER_REJECTED (INSUFFICIENT_LIQUIDITY when a maker
   * could not cover).
   */
  private offerNext(rfq: ActiveRfq): void {
    const nowMs = this.deps.clock.nowMs();
    const isPastExpiry = nowMs >= rfq.record.expiresAtMs;
    for (let candidate = rfq.candidates.shift(); candidate !== undefined; candidate = rfq.candidates.shift()) {
      // Fills since the quote arrived may have taken the maker's collateral: pass over it (its maker gets `lost`).
      if (!this.canCover(candidate.quote.makerAddress, candidate.fillWagerMicros, candidate.quote.oddsE4)) {
        passOverUncovered(rfq, candidate);
        continue;
      }
      if (!candidate.quote.isLastLook) return void this.commitFill(rfq, candidate);
      const look = decideLastLook({
        nowMs,
        lastLookMs: this.deps.lastLookMs,
        expiresAtMs: rfq.record.expiresAtMs,
        maxFinalizingMs: this.deps.maxFinalizingMs,
        firstOfferAtMs: rfq.firstLastLookAtMs,
        offersToMaker: rfq.lastLooksByMaker?.get(candidate.quote.makerAddress) ?? 0,
      });
      if (look.kind === 'pass') continue;
      // No maker is asked to confirm a bet on a market that has closed meanwhile (commitFill decides anyway).
      if (!this.areLegsOpen(rfq, nowMs)) return void this.finish(rfq, 'failed', 'MARKET_CLOSED');
      return this.offerLastLook(rfq, candidate, nowMs, look.deadlineMs);
    }
    // Quotes there were, but no maker could cover them (contract section 11): a want of liquidity. ORDER_EXPIRED
    // is a signed order's (contract section 2): an unsigned RFQ's end of last looks is no expiry of the taker's.
    const isOrderExpired = isPastExpiry && rfq.record.kind === 'signed';
    void this.finish(
      rfq,
      'failed',
      isOrderExpired ? 'ORDER_EXPIRED' : rfq.uncoveredCount > 0 ? 'INSUFFICIENT_LIQUIDITY' : 'MAKER_REJECTED',
    );
  }

  private offerLastLook(rfq: ActiveRfq, candidate: Candidate, nowMs: number, deadlineMs: number): void {
    // Allocated only for an RFQ that gets to a last look: a firm fill costs nothing more.
    const offers = (rfq.lastLooksByMaker ??= new Map());
    const address = candidate.quote.makerAddress;
    offers.set(address, (offers.get(address) ?? 0) + 1);
    rfq.firstLastLookAtMs ??= nowMs;
    rfq.phase = 'finalizing';
    rfq.record.status = 'finalizing';
    rfq.lastLook = candidate;
    rfq.lastLookDeadlineMs = deadlineMs;
    this.deps.toMaker(candidate.quote.makerId, {
      type: 'last_look',
      request_id: rfq.record.requestId,
      quote_id: candidate.quote.quoteId,
      fill_wager_micros: candidate.fillWagerMicros.toString(),
      deadline_ms: deadlineMs,
    });
    rfq.timer = this.deps.clock.setTimer(() => this.endLastLook(rfq, false), deadlineMs - nowMs);
  }

  /** The fill is durable (ledger, record, maker's fill) before the taker or any maker hears of it. */
  private async commitFill(rfq: ActiveRfq, candidate: Candidate): Promise<void> {
    rfq.phase = 'closing';
    // Contract section 6.5: finalizing covers the chosen fill being made durable (a status read says so).
    rfq.record.status = 'finalizing';
    rfq.filling = candidate;
    const { record } = rfq;
    const nowMs = this.deps.clock.nowMs();
    const { fill, fillRecord } = fillOf(record, candidate, nowMs);
    const completed = endedRecord(record, { status: 'completed', fill, error: null, terminalAtMs: nowMs });
    const written = await this.persistTerminal(rfq, () =>
      this.deps.durability.fill(rfq, completed, fillRecord, () => this.areLegsOpen(rfq, nowMs)),
    );
    rfq.filling = null;
    if (written === null) return;
    if (written === UNCOVERED) {
      passOverUncovered(rfq, candidate);
      // Nothing was written: the RFQ is active again and selection goes on to the next quote.
      this.deps.active.set(record.requestId, rfq);
      return this.offerNext(rfq);
    }
    rfq.record = written.record;
    if (written.record.status !== 'completed') return this.retire(rfq, written.persistUs, 'expired');
    for (const makerId of rfq.quoters) {
      const isWinner = makerId === candidate.quote.makerId;
      this.deps.toMaker(makerId, {
        type: 'rfq_result',
        request_id: record.requestId,
        outcome: isWinner ? 'won' : 'lost',
        ...(isWinner ? { quote_id: fill.quoteId, odds: fill.oddsE4 / 10_000, filled_wager_micros: fill.filledWagerMicros } : {}),
      });
    }
    this.retire(rfq, written.persistUs, null);
  }

  /**
   * The end is decided: the RFQ leaves the active ones for the closing ones while it is made durable (see
   * RfqWrites.persistTerminal), and is forgotten once it is.
   */
  private async persistTerminal<T extends WrittenEnd | typeof UNCOVERED | null>(rfq: ActiveRfq, end: () => Promise<T>): Promise<T> {
    const { requestId } = rfq.record;
    this.deps.active.delete(requestId);
    this.deps.closing.set(requestId, rfq);
    try {
      return await end();
    } finally {
      this.deps.closing.delete(requestId);
    }
  }

  /**
   * The RFQ's end is durable: its quoters hear `outcome` (unless commitFill told them already, null) and the
   * main thread hears of it (the actor forgot it in persistTerminal).
   */
  private retire(rfq: ActiveRfq, persistUs: number, outcome: 'expired' | 'cancelled' | null): void {
    if (outcome !== null) {
      // A maker passed over for want of collateral lost the RFQ, whatever ended it (contract section 11).
      const lost = rfq.uncoveredMakerIds;
      for (const makerId of rfq.quoters) {
        const told = lost !== null && lost.has(makerId) ? 'lost' : outcome;
        this.deps.toMaker(makerId, { type: 'rfq_result', request_id: rfq.record.requestId, outcome: told });
      }
    }
    const { isAwaitedByCreate, quotingUs, selectionUs } = rfq;
    const { createdAtMs } = rfq.record;
    const filledBy = rfq.record.fill?.makerAddress ?? null;
    const result = toRfqResult(rfq.record);
    this.deps.emit({ kind: 'terminal', result, isAwaitedByCreate, quotingUs, selectionUs, persistUs, createdAtMs, filledBy });
  }
}
