// Runs inside one RFQ shard (shard-worker.ts, or the in-process transport of tests). The actor: it alone owns
// its takers' active RFQs, their quotes and timers, and their balances, and decides every transition: whether
// a new RFQ is a replay, is refused or is accepted (its id and times are minted here), and every movement of
// its users' money. The engine behind `durability` (rfq-durability.ts: the journal engine's owner in memory
// and its journal, or the lmdb engine's LMDB transactions) decides the money at once and makes it durable
// before anyone hears of it, except the `rfq` frame of an accepted RFQ, which goes to the makers while its
// create is made durable; `emit` is the only way out of the actor. Here: the calls and the maker messages;
// from the close of quoting on, finalization.ts.
import assert from 'node:assert/strict';
import { systemClock, type TimerClock } from '../lib/clock.js';
import { ApiError, errors } from '../lib/errors.js';
import { makerError } from '../contract/maker-protocol.js';
import { makerFactOf } from './maker-facts.js';
import type { RfqResult } from '../contract/rfq.js';
import type { QuoteRejectReason } from '../contract/mm.js';
import type { Store } from '../store/db.js';
import { newRequestId } from './ids.js';
import { quoteDeadlineOf, rfqTimes, toRfqMessage } from './announcement.js';
import type { CallOutcome, CreateRfq, CreatedRfq, MainToShard, ShardInit, ShardToMain } from './messages.js';
import {
  addAudience,
  hasAllResponded,
  isAtQuoteLimit,
  markResponded,
  newActiveRfq,
  quoteKey,
  removeFromAudience,
  withdrawQuote,
  withdrawQuotesOf,
  type ActiveRfq,
} from './active-rfq.js';
import { RfqFinalization, type ToMaker } from './finalization.js';
import type { RfqDurability } from './rfq-durability.js';
import { toRfqResult, type RfqRecord } from '../records/rfqs.js';

export class RfqShard {
  private readonly active = new Map<string, ActiveRfq>();
  /**
   * RFQs whose end is on its way to durability (finalization.ts persistTerminal), out of `active`: a fill the
   * maker's owner refuses (UNCOVERED) comes back to selection, so its remaining quotes must still hear of
   * cancels, withdrawals and closed sockets; and a status read shows it as it stands.
   */
  private readonly closing = new Map<string, ActiveRfq>();
  /** Creations between admission and commit, by replay key: a racing duplicate waits for the first. */
  private readonly creating = new Map<string, Promise<unknown>>();
  private readonly finalization: RfqFinalization;
  private readonly toMaker: ToMaker;

  constructor(
    private readonly store: Store,
    private readonly durability: RfqDurability,
    private readonly init: ShardInit,
    private readonly emit: (message: ShardToMain) => void,
    private readonly clock: TimerClock = systemClock,
  ) {
    this.toMaker = (makerId, message) => {
      const frame = JSON.stringify(message);
      const fact = makerFactOf(message);
      emit(fact === null ? { kind: 'to_maker', makerId, frame } : { kind: 'to_maker', makerId, frame, ...fact });
    };
    const { active, closing, toMaker } = this;
    this.finalization = new RfqFinalization({
      store,
      durability,
      clock,
      lastLookMs: init.lastLookMs,
      maxFinalizingMs: init.maxFinalizingMs,
      active,
      closing,
      emit,
      toMaker,
    });
  }

  /** At start, before any message: the RFQs of this shard's users that were active end (RfqDurability.failInterrupted). */
  failInterrupted(): Promise<number> {
    return this.durability.failInterrupted();
  }

  get activeCount(): number {
    return this.active.size;
  }

  handle(message: MainToShard): void {
    switch (message.kind) {
      case 'create':
        void this.outcome(() => this.create(message)).then((outcome) => this.emit({ kind: 'created', callId: message.callId, outcome }));
        return;
      case 'money':
        void this.outcome(() => this.durability.money(message.op)).then((outcome) =>
          this.emit({ kind: 'money', callId: message.callId, outcome }),
        );
        return;
      case 'status':
        void this.outcome(() => this.status(message.requestId, message.userId)).then((outcome) =>
          this.emit({ kind: 'status', callId: message.callId, outcome }),
        );
        return;
      case 'cancel':
        void this.outcome(() => this.cancel(message.requestId, message.userId)).then((outcome) =>
          this.emit({ kind: 'cancelled', callId: message.callId, outcome }),
        );
        return;
      case 'audience':
        return this.onAudience(message.requestId, message.makerIds);
      case 'quote':
        return this.onQuote(message);
      case 'decline':
        return this.onDecline(message.requestId, message.makerId);
      case 'declines':
        for (const makerId of message.makerIds) this.onDecline(message.requestId, makerId);
        return;
      case 'quote_cancel':
        return this.onQuoteCancel(message.requestId, message.makerId, message.quoteId);
      case 'last_look_response':
        return this.onLastLookResponse(message);
      case 'maker_disconnected':
        return this.onMakerDisconnected(message.makerId);
      case 'barrier':
        void this.durability
          .barrier(message.after)
          .then((sent) => this.emit({ kind: 'barrier', callId: message.callId, outcome: { ok: true, value: sent } }));
        return;
      case 'withdraw_quotes': // the maker's quote book: decided by active-rfq.ts withdrawQuotesOf
        return this.emit({
          kind: 'withdrawn',
          callId: message.callId,
          outcome: { ok: true, value: withdrawQuotesOf([...this.active.values(), ...this.closing.values()], new Set(message.makerIds)) },
        });
      default: {
        const unknown: never = message;
        throw new Error(`unknown shard message ${JSON.stringify(unknown)}`);
      }
    }
  }

  // ---- calls from the HTTP side -------------------------------------------------------------------------

  private async create(command: CreateRfq): Promise<CreatedRfq> {
    const pending = this.creating.get(command.replayKey);
    if (pending !== undefined) {
      await pending.catch(() => undefined); // the first decides; then this one is a replay or a fresh try
      return this.create(command);
    }
    const replay = this.findReplay(command);
    if (replay !== null) return replay;
    // Contract section 6: the checks made on the main thread (expiry, legs, wager) apply after the replay
    // key, so a replay after expires_at_ms or after its markets closed is still 200.
    if (command.refusal !== null) throw new ApiError(command.refusal.code, command.refusal.message);
    // Again here, on the clock that sets its quote deadline: one that expired on its way from admission would
    // go to the makers with a deadline already past.
    if (command.rfqKind === 'signed' && command.expiresAtMs <= this.clock.nowMs()) throw new ApiError('ORDER_EXPIRED');
    if (this.active.size >= this.init.maxActiveRfqs) throw errors.shardAtActiveLimit();
    // After the replay check, so a replay still answers 200 on a full store; before anything is decided.
    this.store.assertRoom();
    const creation = this.persistNew(command, this.clock.nowMs());
    this.creating.set(command.replayKey, creation);
    try {
      return await creation;
    } finally {
      this.creating.delete(command.replayKey);
    }
  }

  private findReplay(command: CreateRfq): CreatedRfq | null {
    const key = this.durability.replayKey(command.replayKey);
    if (key === undefined) return null;
    if (key.contentHash !== command.contentHash) throw new ApiError('IDEMPOTENCY_CONFLICT');
    return { result: this.currentResult(key.requestId), isReplay: true, persistUs: 0 };
  }

  /**
   * Mints the RFQ's id and times, decides its reservation, and has the makers told at once; the create is
   * made durable meanwhile: reservation, record and replay key together (RfqDurability.create). Makers never
   * hear of an RFQ that is refused: the balance is decided before the `rfq` leaves.
   */
  private async persistNew(command: CreateRfq, nowMs: number): Promise<CreatedRfq> {
    const requestId = newRequestId(this.init.shard, nowMs);
    const times = rfqTimes(command, nowMs, this.init);
    const record: RfqRecord = {
      requestId,
      userId: command.userId,
      wallet: command.wallet,
      kind: command.rfqKind,
      legs: command.legs,
      wagerMicros: command.wagerMicros,
      minOddsE4: command.minOddsE4,
      toleranceBps: command.toleranceBps,
      orderType: command.orderType,
      isShielded: command.isShielded,
      createdAtMs: times.createdAtMs,
      expiresAtMs: times.expiresAtMs,
      status: 'pending',
      quotesReceived: 0,
      fill: null,
      error: null,
      terminalAtMs: null,
    };
    const rfq: ActiveRfq = newActiveRfq(record, null, command.answerWaitMs > 0);
    // The record as created: the live one changes (quotes, last look) while the write may be held.
    const created: RfqRecord = { ...record };
    const durable = this.durability.create(command, created, rfq, Math.min(command.answerWaitMs, this.init.createCoalesceMs));
    if (durable === null) throw new ApiError('INSUFFICIENT_BALANCE');
    rfq.timer = this.clock.setTimer(() => this.finalization.close(rfq), times.quoteDeadlineMs - nowMs);
    this.active.set(requestId, rfq);
    // The makers hear of the RFQ before its create is durable, not after: the write overlaps their round trip
    // instead of preceding it (docs/durability.md). The main thread answers with the audience (onAudience).
    this.emit({ kind: 'broadcast', message: toRfqMessage(requestId, command, times) });
    try {
      const persistUs = await durable;
      return { result: toRfqResult(created), isReplay: false, persistUs };
    } catch (err) {
      // The commit failed (disk or map full): the RFQ never existed. Makers that quoted it hear it was
      // cancelled; later quotes get RFQ_CLOSED. Nothing was reserved or written.
      this.finalization.clearTimer(rfq);
      this.active.delete(requestId);
      for (const makerId of rfq.quoters) this.toMaker(makerId, { type: 'rfq_result', request_id: requestId, outcome: 'cancelled' });
      throw err;
    }
  }

  private status(requestId: string, userId: string): RfqResult {
    const rfq = this.active.get(requestId) ?? this.closing.get(requestId);
    if (rfq !== undefined && rfq.record.userId === userId) return toRfqResult(rfq.record);
    const record = this.durability.readRfq(requestId);
    if (record === undefined || record.userId !== userId) throw new ApiError('RFQ_NOT_FOUND');
    return toRfqResult(record);
  }

  private async cancel(requestId: string, userId: string): Promise<RfqResult> {
    const rfq = this.active.get(requestId);
    if (rfq === undefined || rfq.record.userId !== userId) {
      const record = this.durability.readRfq(requestId);
      if (record === undefined || record.userId !== userId) throw new ApiError('RFQ_NOT_FOUND');
      throw new ApiError('RFQ_NOT_CANCELLABLE');
    }
    if (rfq.phase !== 'quoting') throw new ApiError('RFQ_NOT_CANCELLABLE');
    await this.finalization.finish(rfq, 'cancelled', null);
    return toRfqResult(rfq.record);
  }

  private currentResult(requestId: string): RfqResult {
    const rfq = this.active.get(requestId) ?? this.closing.get(requestId);
    if (rfq !== undefined) return toRfqResult(rfq.record);
    const record = this.durability.readRfq(requestId);
    assert.ok(record !== undefined, `replay key points at missing RFQ ${requestId}`);
    return toRfqResult(record);
  }

  // ---- maker messages -----------------------------------------------------------------------------------

  private onAudience(requestId: string, makerIds: string[]): void {
    const rfq = this.active.get(requestId);
    if (rfq === undefined || rfq.phase !== 'quoting') return;
    // A later audience adds connections (a maker that resumed its stream got the rfq replayed).
    addAudience(rfq, makerIds);
    this.closeIfAllResponded(rfq);
  }

  private onQuote(q: Extract<MainToShard, { kind: 'quote' }>): void {
    const rfq = this.active.get(q.requestId);
    const reject = (reason: QuoteRejectReason) =>
      this.toMaker(q.makerId, { type: 'quote_reject', request_id: q.requestId, quote_id: q.quoteId, reason });
    if (rfq === undefined || rfq.phase !== 'quoting') return reject('RFQ_CLOSED');
    // Quotes are taken until quote_deadline_ms, by when the main thread read them: one read after it is
    // refused though this thread's timer has not closed the window yet (a busy shard runs it late).
    if (q.receivedAtMs > quoteDeadlineOf(rfq.record, this.init)) return reject('RFQ_CLOSED');
    if (rfq.audience === null || !rfq.audience.has(q.makerId)) return reject('NOT_IN_AUDIENCE');
    // Contract section 11: a maker never fills its own wallet's RFQ (its address may have been registered as a
    // maker after it logged in as a user). It counts as having answered, so the RFQ can still close early.
    if (q.makerAddress === rfq.record.wallet) {
      markResponded(rfq, q.makerId);
      reject('OWN_RFQ');
      return this.closeIfAllResponded(rfq);
    }
    const key = quoteKey(q.makerId, q.quoteId);
    if (rfq.quotes.has(key)) return reject('DUPLICATE_QUOTE_ID');
    if (isAtQuoteLimit(rfq, q.makerAddress)) return reject('QUOTE_LIMIT');
    const maxWagerMicros = BigInt(q.maxWagerMicros);
    if (maxWagerMicros <= 0n) return reject('MAX_WAGER_NOT_POSITIVE');
    // Contract section 11: a quote whose liability the maker cannot cover now is refused and not counted (it
    // answered, though, for the early close). The fill checks again, exactly, inside its transaction.
    const fillableMicros = maxWagerMicros < rfq.wagerMicros ? maxWagerMicros : rfq.wagerMicros;
    if (!this.finalization.canCover(q.makerAddress, fillableMicros, q.oddsE4)) {
      markResponded(rfq, q.makerId);
      reject('INSUFFICIENT_COLLATERAL');
      return this.closeIfAllResponded(rfq);
    }
    rfq.quotes.set(key, {
      makerId: q.makerId,
      makerAddress: q.makerAddress,
      quoteId: q.quoteId,
      oddsE4: q.oddsE4,
      maxWagerMicros,
      isLastLook: q.isLastLook,
      seq: rfq.nextSeq++,
    });
    rfq.quoters.add(q.makerId);
    markResponded(rfq, q.makerId);
    rfq.record.quotesReceived += 1;
    this.toMaker(q.makerId, { type: 'quote_ack', request_id: q.requestId, quote_id: q.quoteId, received_at_ms: q.receivedAtMs });
    this.closeIfAllResponded(rfq);
  }

  private onDecline(requestId: string, makerId: string): void {
    const rfq = this.active.get(requestId);
    if (rfq === undefined || rfq.phase !== 'quoting' || rfq.audience?.has(makerId) !== true) return;
    markResponded(rfq, makerId);
    this.closeIfAllResponded(rfq);
  }

  /** Honoured until the quote is selected (active-rfq.ts withdrawQuote), and answered either way. */
  private onQuoteCancel(requestId: string, makerId: string, quoteId: string): void {
    const rfq = this.active.get(requestId) ?? this.closing.get(requestId);
    if (rfq !== undefined && withdrawQuote(rfq, makerId, quoteId)) {
      return this.toMaker(makerId, { type: 'quote_cancelled', request_id: requestId, quote_id: quoteId });
    }
    this.toMaker(makerId, makerError('QUOTE_NOT_FOUND', requestId, quoteId));
  }

  /**
   * An answer out of turn (late, repeated, never asked for) changes nothing and says so (contract section 7).
   * Late is by when the main thread read it: one read past its deadline_ms is refused though this thread's
   * timer has not run yet (a busy shard would otherwise stretch the maker's option); the timer then ends the
   * last look as a reject.
   */
  private onLastLookResponse(message: Extract<MainToShard, { kind: 'last_look_response' }>): void {
    const { requestId, makerId, quoteId } = message;
    const rfq = this.active.get(requestId);
    const offered = rfq?.lastLook;
    const isPending = rfq !== undefined && offered != null && offered.quote.makerId === makerId && offered.quote.quoteId === quoteId;
    if (!isPending || message.receivedAtMs > rfq.lastLookDeadlineMs) {
      return this.toMaker(makerId, makerError('LAST_LOOK_NOT_PENDING', requestId, quoteId));
    }
    this.finalization.endLastLook(rfq, message.isAccepted);
  }

  /** Contract section 6: a closed socket withdraws its quotes everywhere, and a pending last look is a reject. */
  private onMakerDisconnected(makerId: string): void {
    // Those closing keep only a fill being written, which may come back to selection: their other quotes go.
    if (this.closing.size > 0) withdrawQuotesOf(this.closing.values(), new Set([makerId]));
    for (const rfq of this.active.values()) {
      for (const [key, quote] of rfq.quotes) if (quote.makerId === makerId) rfq.quotes.delete(key);
      rfq.candidates = rfq.candidates.filter((c) => c.quote.makerId !== makerId);
      if (rfq.phase === 'quoting' && removeFromAudience(rfq, makerId)) this.closeIfAllResponded(rfq);
      if (rfq.lastLook?.quote.makerId === makerId) this.finalization.endLastLook(rfq, false);
    }
  }

  private closeIfAllResponded(rfq: ActiveRfq): void {
    if (rfq.phase === 'quoting' && hasAllResponded(rfq)) this.finalization.close(rfq);
  }

  private async outcome<T>(run: () => T | Promise<T>): Promise<CallOutcome<T>> {
    try {
      return { ok: true, value: await run() };
    } catch (err) {
      if (err instanceof ApiError) return { ok: false, code: err.code, message: err.message };
      throw err; // a bug: crash the worker (the main thread fails its calls and restarts nothing silently)
    }
  }
}
