// Inside an RFQ shard. The durable writes of the shard's RFQs (put through rfq-records.ts, the family's one
// module), apart from the decisions: the create's write and
// how it may be held to share its RFQ's terminal commit, the terminal write, and the recovery at start.
// Everything here runs in the shard's group commit (store/group-commit.ts) and moves money only through the
// shard's own Ledger.
import assert from 'node:assert/strict';
import type { TimerClock } from '../lib/clock.js';
import type { BalanceOwner, Ledger } from '../ledger/ledger.js';
import type { Store } from '../store/db.js';
import type { ActiveRfq } from './active-rfq.js';
import type { FillRecord } from '../records/fills.js';
import type { CreateRfq } from './messages.js';
import { endedRecord, isTerminal, rfqRef, type RfqRecord, type RfqKeyRecord } from '../records/rfqs.js';
import { applyWrites } from '../store/records.js';
import { UNCOVERED } from './rfq-durability.js';
import {
  activeRequestIds,
  createdWrites,
  endedWrites,
  fillWrites,
  forgetActive,
  markActive,
  readReplayKey,
  readRfq,
} from './rfq-records.js';

export class RfqWrites {
  constructor(
    private readonly store: Store,
    private readonly ledger: Ledger,
    private readonly clock: TimerClock,
  ) {}

  /**
   * At start, before the shard takes any message: every RFQ of this shard's users that was active when the
   * process stopped ends failed SERVICE_RESTARTED and its reservation is released (contract section 6,
   * crash), in one transaction. A fill that was made durable is terminal already and is left alone. Every shard reads the
   * (few) active markers and ends those of its own users: shard counts may differ between starts.
   */
  async failInterrupted(owner: BalanceOwner): Promise<number> {
    // On a full disk the shard waits for room instead of failing at start (the process would only restart
    // into the same full disk); it takes no message meanwhile (shard-host.ts holds them).
    return this.store.room.untilWritten(() =>
      this.store.transact(() => {
        let failed = 0;
        for (const requestId of activeRequestIds(this.store)) {
          const record = readRfq(this.store, requestId);
          if (record !== undefined && !owner.owns(record.userId)) continue;
          forgetActive(this.store, requestId);
          if (record === undefined || isTerminal(record.status)) continue;
          const nowMs = this.clock.nowMs();
          this.ledger.release(rfqRef(requestId), nowMs);
          applyWrites(
            this.store,
            endedWrites(endedRecord(record, { status: 'failed', fill: null, error: 'SERVICE_RESTARTED', terminalAtMs: nowMs }), true),
          );
          failed++;
        }
        return failed;
      }),
    );
  }

  /** What a replay key points at (the request id and the content it was first used with), if it was used. */
  replayKeyRecord(replayKey: string): RfqKeyRecord | undefined {
    return readReplayKey(this.store, replayKey);
  }

  /**
   * Makes the create durable; resolves with the commit's duration in µs. When the taker's answer waits for
   * the terminal result (wait_ms), nobody can learn of the RFQ's id before it ends, so the create's write is
   * held for up to `holdMs` and committed in the same group commit as the terminal write: one fsync per RFQ
   * instead of two when the makers answer within the hold (the group runs the create first, so a refused
   * create makes the terminal write a no-op: persistTerminal). Past `holdMs` it commits alone, so every
   * answer the taker gets, even a `pending` one at the end of its wait, follows a durable create.
   */
  commitCreate(rfq: ActiveRfq, holdMs: number, write: () => void): Promise<number> {
    return new Promise((resolve, reject) => {
      const commit = () => {
        rfq.commitHeldCreate = null;
        if (holdTimer !== undefined) this.clock.clearTimer(holdTimer);
        const startNs = process.hrtime.bigint();
        this.store.transact(write).then(() => resolve(Number(process.hrtime.bigint() - startNs) / 1000), reject);
      };
      const holdTimer = holdMs > 0 ? this.clock.setTimer(commit, holdMs) : undefined;
      if (holdTimer === undefined) commit();
      else rfq.commitHeldCreate = commit;
    });
  }

  /**
   * Commits the RFQ's end, after the create's write if that was still held (the same group commit). `end`
   * runs inside the transaction: it moves the money and returns the terminal record to store (a fill can
   * still become a failure there: commitFill), or UNCOVERED when the winning maker can no longer cover the
   * fill: then nothing is written and the caller goes on to the next quote. Resolves with the record and the
   * commit's duration in µs (a stage latency the main thread reports), UNCOVERED, or null when the create
   * was refused in that commit: then the RFQ never existed, and persistNew tells its caller and its makers.
   *
   * The actor has moved the RFQ from its active ones to those closing (finalization.ts persistTerminal): its
   * end is decided (its quotes get RFQ_CLOSED, it is not cancellable, a status read shows it as it stands;
   * while its create is held, nobody but its makers knows the id), and only a fill refused UNCOVERED brings it
   * back to selection.
   *
   * A commit that fails for want of space (a full disk) is retried until it commits (room.ts untilWritten,
   * 1 s doubling to 30 s): the end was decided and the makers may act on it, so it must not be lost, and the
   * shard must not fail (that stopped the process). Retrying the same `end` is the same decision: nothing of
   * the failed commit was kept, and `end` reads the money it moves inside the transaction. Meanwhile the RFQ
   * reads as its stored record (`pending`) and its wager stays reserved; new work gets 503 (assertRoom).
   */
  async persistTerminal(
    rfq: ActiveRfq,
    end: () => RfqRecord | typeof UNCOVERED,
  ): Promise<{ record: RfqRecord; persistUs: number } | typeof UNCOVERED | null> {
    const { requestId } = rfq.record;
    rfq.commitHeldCreate?.();
    const startNs = process.hrtime.bigint();
    const record = await this.store.room.untilWritten(() =>
      this.store.transact(() => {
        const stored = readRfq(this.store, requestId);
        if (stored === undefined) return null;
        assert.ok(!isTerminal(stored.status), `RFQ ${requestId} would end twice`);
        const ended = end();
        if (ended === UNCOVERED) {
          // The fill did not end it: the RFQ goes on (another quote, a last look) on disk as `pending`, and a
          // crash from here must find it to end it SERVICE_RESTARTED and release its wager (contract section
          // 6). A create committed in this same group (held, or written by its hold's timer in this turn)
          // went without the rfqActive marker, since the RFQ was 'closing' when the group ran it
          // (createInTxn): it gets it now. Only this rare case costs the read, and at most one write.
          markActive(this.store, requestId);
          return UNCOVERED;
        }
        assert.ok(isTerminal(ended.status) && ended.requestId === requestId);
        applyWrites(this.store, endedWrites(ended, true));
        return ended;
      }),
    );
    return record === null || record === UNCOVERED ? record : { record, persistUs: Number(process.hrtime.bigint() - startNs) / 1000 };
  }

  /**
   * The create: the wager's hold, the record, the replay key and its place in the user's history. `isStillActive` false means its terminal
   * write follows in this same commit (persistTerminal queued it when it set the phase): it was never active
   * on disk, so no marker for recovery (one page fewer). Should that terminal write be an UNCOVERED fill,
   * which writes nothing, persistTerminal writes the marker in its stead.
   */
  createInTxn(command: CreateRfq, created: RfqRecord, isStillActive: boolean): void {
    const { requestId } = created;
    this.ledger.reserve(command.userId, BigInt(command.wagerMicros), rfqRef(requestId), created.createdAtMs);
    applyWrites(this.store, createdWrites(created, { key: command.replayKey, contentHash: command.contentHash }, isStillActive));
  }

  /**
   * A fill's money and records; returns the record to store: `completed`; `failed MARKET_CLOSED` when a leg
   * no longer takes bets; or UNCOVERED, with nothing written, when the maker's available no longer covers the
   * liability (other fills took it since its quote arrived). Decided here, inside the fill's transaction,
   * where LMDB's one writer orders it against a market's resolution and every other fill of the maker: a
   * leg market that resolved or stopped taking bets since selection (during a last look, say) is not
   * filled, else a maker could confirm a bet whose result is known and the fill would miss the settlement
   * that ran when the market resolved; and a maker's locked total never exceeds what it had.
   */
  fillInTxn(completed: RfqRecord, fill: FillRecord, areLegsOpen: () => boolean): RfqRecord | typeof UNCOVERED {
    const { requestId, terminalAtMs } = completed;
    assert.ok(terminalAtMs !== null);
    if (!areLegsOpen()) {
      this.ledger.release(rfqRef(requestId), terminalAtMs);
      return endedRecord(completed, { status: 'failed', fill: null, error: 'MARKET_CLOSED', terminalAtMs });
    }
    const filledMicros = BigInt(fill.filledWagerMicros);
    const liabilityMicros = BigInt(fill.payoutMicros) - filledMicros;
    if (!this.ledger.fill(rfqRef(requestId), filledMicros, fill.makerAddress, liabilityMicros, terminalAtMs)) return UNCOVERED;
    applyWrites(this.store, fillWrites(completed, fill));
    return completed;
  }
}
