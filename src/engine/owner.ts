// Any thread; pure. An owner actor's money decisions: a message and the time in; effects (its journal
// record), and outputs to release once that record is durable, out. The thread, the journal and the transport
// around it are the host's (the shard worker; the seeded simulator in test/engine). The owner never waits:
// what needs another owner is a message, answered later as another input.
//
// Accounts have one owner each (Book.ownerOf). Money between two owners moves in two ways:
//   - a fill whose maker lives elsewhere locks the maker's liability there first (two phases): the taker's
//     owner asks (`lock`), the maker's owner moves the liability to locked under a pending hold and grants; the
//     taker's owner commits the fill and sends `post_lock`, or `void_lock` if the fill will never be. A lock
//     is never voided blindly: the maker's owner asks the fill's owner (`fate`) about a lock pending too long,
//     and voids it only when told the fill will never be (the fill's owner no longer has it in flight and has
//     not decided it: after its crash, an interrupted fill is failed).
//   - a transfer whose sides have two owners (a settlement's stake or liability) is applied in halves: the
//     debit by its owner, which sends the credit on its channel to the other.
// Channels carry commands in order, at least once (resent until acknowledged), applied once (the receiver's
// watermark), so a crash of either side, a lost message or a restart moves nothing twice. The other messages
// (`lock` and its reply, `fate` and its reply) may be lost but must not be duplicated: a worker thread's port
// never duplicates; a transport that may (NATS) must carry `lock` on the channel, or the maker's owner must
// remember the keys it decided.
import assert from 'node:assert/strict';
import {
  creditRef,
  lockRef,
  makerAccount,
  poolRef,
  PROTOCOL,
  transferId,
  userAccount,
  type AccountId,
  type PositionOutcome,
  type Side,
} from '../records/ledger.js';
import type { CreditKeyUse, MoneyAnswer, MoneyCall, MoneyRefusal } from '../ledger/money-ops.js';
import type { BlindWrite } from '../store/records.js';
import { Book } from './book.js';
import type { ChannelCommand, Effect, Half, Hold, Transfer } from './effects.js';

/** Between owners. */
export type PeerMessage =
  | { m: 'lock'; key: string; ref: string; makerAddress: string; amountMicros: bigint; atMs: number }
  | { m: 'lock_reply'; key: string; isGranted: boolean }
  | { m: 'command'; seq: number; command: ChannelCommand }
  | { m: 'ack'; seq: number }
  | { m: 'fate'; key: string }
  | { m: 'fate_reply'; key: string; isVoided: boolean };

export type Output = { to: 'client'; callId: number; answer: MoneyAnswer } | { to: 'peer'; owner: number; message: PeerMessage };

/**
 * An output that may leave before the journal is durable past what its owner decided before it: a `lock`
 * asks and tells nothing decided. Its fill is memory only until the grant (a crash fails it); the fill's
 * reservation is durable before the fill is called (its RFQ's create was answered); and should this owner
 * crash with records not yet durable, the maker's owner settles the lock by asking (`fate`), as it does for a
 * lock whose answer was lost. Every other output tells a decision (an answer, a grant, a fate, a channel's
 * command or acknowledgement) and waits for its record. Sent at once, a crossing fill does not wait for a
 * flush of records it does not depend on before its lock is even asked (the owner's journal is rarely idle).
 */
export function isAskOnly(output: Output): boolean {
  return output.to === 'peer' && output.message.m === 'lock';
}

/** One input's consequences: the record to journal (empty: nothing to make durable) and what to send after. */
export interface Step {
  effects: Effect[];
  outputs: Output[];
}

export interface OwnerLimits {
  /** A fill waits this long for the maker's owner to grant its lock, then answers OWNER_UNAVAILABLE. */
  lockTimeoutMs: number;
  /** A lock pending this long makes its owner ask the fill's owner about it, and again as long after each ask. */
  lockQueryMs: number;
  /** Commands unacknowledged this long since the last sent to a peer are sent again (each tick after). */
  resendMs: number;
  /** Commands resent per peer per tick, at most. */
  resendPerTick: number;
}

/** A client's call waiting for its answer: its id here, and its request id when it came from across the network. */
interface Caller {
  callId: number;
  requestId?: string | undefined;
}

interface FillInFlight {
  /** The fill's call, and each repeat of it that came while it waited: each gets its answer. */
  callers: Caller[];
  ref: string;
  filledMicros: bigint;
  makerAddress: string;
  liabilityMicros: bigint;
  askedAtMs: number;
  isAborted: boolean;
  /** The client's records that go with the fill: journaled when it commits. */
  facts: readonly BlindWrite[];
}

export class MoneyOwner {
  /** Fills waiting for a remote lock, by lock key: memory only (a crash fails them: recoverInterrupted). */
  readonly #inFlight = new Map<string, FillInFlight>();
  /**
   * Lock attempts asked for by this owner since it started: each attempt's key is its reference's lockRef with
   * this count, unique for as long as the reference can be filled (an RFQ does not outlive a restart: every
   * active one is failed by recoverInterrupted). One counter, not one per RFQ: nothing is kept per RFQ.
   */
  #lockAttempts = 0;
  /**
   * Per peer with commands unacknowledged: since when its acknowledgements have not moved (the first send to
   * an empty outbox, an ack that left some, a resend). A resend is due resendMs after it. New sends do not move
   * it: a receiver drops every command past a gap, so while one is lost each later one is too, and a resend
   * held off by every new send never came while the owner kept sending. Memory only: after a restart
   * everything unacknowledged goes at the first tick.
   */
  readonly #waitingSinceMs = new Map<number, number>();
  /**
   * Pending locks asked about (`fate`), by key: when last. A question or its reply is lost only with a crash,
   * so one ask per lockQueryMs is enough, and a lock whose fill's owner is down costs a message every
   * lockQueryMs, not every tick. Memory only: after a restart every old pending lock is asked at once.
   */
  readonly #fateAskedAtMs = new Map<string, number>();
  /**
   * False until the first tick. A lock still pending then was made before this start, and no answer about it
   * is on its way (its question, if any, was lost with the process): it is asked at once, however young, so
   * that a restart settles its locks in its first moments instead of lockQueryMs after each was made.
   */
  #hasTicked = false;
  #step: Step = { effects: [], outputs: [] };

  constructor(
    readonly book: Book,
    private readonly limits: OwnerLimits,
  ) {}

  get inFlightCount(): number {
    return this.#inFlight.size;
  }

  // ---- inputs --------------------------------------------------------------------------------------------

  /**
   * `facts`: the client's records that go with this call's money (effects.ts 'fact'), journaled in its record
   * when the call succeeds (a remote fill's when it commits) and dropped when it is refused, or when it moved
   * nothing because an earlier call did it already: that call's records stand, and a later call's must not
   * overwrite them (two ends of one withdrawal at once).
   */
  /**
   * A client's call. `requestId` names a call from across the network, which its client may send again until
   * it hears: its answer is kept with the decision (effects.ts 'reply'), and a repeat is told that answer, a
   * refusal included, rather than decided anew against a later state.
   */
  call(callId: number, call: MoneyCall, nowMs: number, facts: readonly BlindWrite[] = [], requestId?: string): Step {
    const replied = requestId === undefined ? undefined : this.book.replies.get(requestId);
    if (replied !== undefined) {
      this.#output({ to: 'client', callId, answer: replied });
      return this.#take();
    }
    const caller: Caller = { callId, requestId };
    const answer = this.#call(caller, call, nowMs, facts);
    if (answer !== null) {
      if (answer.ok && answer.isMoved !== false) this.#facts(facts);
      this.#answer(caller, answer);
    }
    return this.#take();
  }

  /** Tells `caller` its answer, kept first when the call came from across the network. */
  #answer(caller: Caller, answer: MoneyAnswer): void {
    if (caller.requestId !== undefined) this.#emit({ t: 'reply', id: caller.requestId, answer });
    this.#output({ to: 'client', callId: caller.callId, answer });
  }

  peer(from: number, message: PeerMessage, nowMs: number): Step {
    switch (message.m) {
      case 'lock':
        this.#grantLock(from, message);
        break;
      case 'lock_reply':
        this.#onLockReply(from, message.key, message.isGranted, nowMs);
        break;
      case 'command':
        this.#receive(from, message.seq, message.command, nowMs);
        break;
      case 'ack':
        if ((this.book.outboxes.get(from)?.entries[0]?.seq ?? Infinity) <= message.seq) {
          this.#emit({ t: 'acked', to: from, seq: message.seq });
          if (this.book.outboxes.get(from)?.entries.length === 0) this.#waitingSinceMs.delete(from);
          else this.#waitingSinceMs.set(from, nowMs);
        }
        break;
      case 'fate':
        this.#output({
          to: 'peer',
          owner: from,
          message: { m: 'fate_reply', key: message.key, isVoided: this.#isNeverFilled(from, message.key) },
        });
        break;
      case 'fate_reply':
        if (message.isVoided) this.#voidLock(message.key, nowMs);
        break;
      default: {
        const unknown: never = message;
        throw new Error(`unknown peer message ${JSON.stringify(unknown)}`);
      }
    }
    return this.#take();
  }

  /** Periodic: resends unacknowledged commands, asks about old pending locks, times out unanswered locks. */
  tick(nowMs: number): Step {
    for (const [peer, outbox] of this.book.outboxes) {
      if (outbox.entries.length === 0 || nowMs - (this.#waitingSinceMs.get(peer) ?? -Infinity) < this.limits.resendMs) continue;
      this.#waitingSinceMs.set(peer, nowMs);
      for (const entry of outbox.entries.slice(0, this.limits.resendPerTick)) {
        this.#output({ to: 'peer', owner: peer, message: { m: 'command', seq: entry.seq, command: entry.command } });
      }
    }
    for (const key of this.#fateAskedAtMs.keys()) {
      if (this.book.holds.get(key)?.pendingFor === undefined) this.#fateAskedAtMs.delete(key);
    }
    for (const [key, hold] of this.book.holds) {
      if (hold.pendingFor === undefined) continue;
      if (this.#hasTicked && nowMs - hold.pendingFor.atMs < this.limits.lockQueryMs) continue;
      if (nowMs - (this.#fateAskedAtMs.get(key) ?? -Infinity) < this.limits.lockQueryMs) continue;
      this.#fateAskedAtMs.set(key, nowMs);
      this.#output({ to: 'peer', owner: hold.pendingFor.owner, message: { m: 'fate', key } });
    }
    this.#hasTicked = true;
    for (const [key, fill] of this.#inFlight) {
      if (nowMs - fill.askedAtMs < this.limits.lockTimeoutMs) continue;
      // No answer in time (the request or its answer was lost with a crash): the caller hears so, and the
      // lock, should it have been granted after all, is voided when its owner asks or its grant arrives.
      this.#inFlight.delete(key);
      this.#answerFill(fill, refused(fill.isAborted ? 'ABORTED' : 'OWNER_UNAVAILABLE'));
    }
    return this.#take();
  }

  /**
   * After recovery, before any input: the RFQs that were active did not survive the restart, so their
   * reservations go back (contract section 6); their fills in flight are forgotten, and the locks granted
   * for them are voided when their owners ask. At most `maxRfqs` per step, each step one journal record: a
   * record is bounded (wal/record.ts, 1 MiB), and thousands of RFQs' releases with their records in one
   * would stop every start. Called until its step is empty; a crash between steps leaves the rest held,
   * released at the next start.
   */
  recoverInterrupted(nowMs: number, factsOf: (ref: string) => readonly BlindWrite[] = () => [], maxRfqs = Infinity): Step {
    let released = 0;
    for (const [ref, hold] of [...this.book.holds]) {
      if (released === maxRfqs) break;
      if (!ref.startsWith('rfq:') || hold.bucket !== 'reserved') continue;
      this.#release(ref, hold, nowMs);
      // The RFQ's own records say how it ended (failed SERVICE_RESTARTED), in the release's record.
      this.#facts(factsOf(ref));
      released++;
    }
    return this.#take();
  }

  // ---- calls ---------------------------------------------------------------------------------------------

  #call(caller: Caller, call: MoneyCall, nowMs: number, facts: readonly BlindWrite[]): MoneyAnswer | null {
    switch (call.op) {
      case 'credit':
        return this.#credit(call.account, call.amountMicros, call.key, call.stored, nowMs);
      case 'reserve': {
        const account = userAccount(call.userId);
        if (this.book.holds.has(call.ref)) return this.#heldAgain(call.ref, account, 'reserved', call.amountMicros);
        if (this.book.available(account) < call.amountMicros) return refused('INSUFFICIENT_BALANCE');
        this.#move(
          'reserve',
          call.ref,
          'reserve',
          { account, bucket: 'available' },
          { account, bucket: 'reserved' },
          call.amountMicros,
          nowMs,
        );
        this.#hold(call.ref, { account, bucket: 'reserved', amountMicros: call.amountMicros });
        return { ok: true };
      }
      case 'release': {
        const hold = this.book.holds.get(call.ref);
        if (hold === undefined || hold.bucket !== 'reserved') return { ok: true, isMoved: false };
        this.#release(call.ref, hold, nowMs);
        return { ok: true, isMoved: true };
      }
      case 'fill': {
        const again = this.#fillAgain(caller, call);
        return again === 'new' ? this.#fill(caller, call, nowMs, facts) : again;
      }
      case 'abort_fill':
        for (const fill of this.#inFlight.values()) if (fill.ref === call.ref) fill.isAborted = true;
        return { ok: true };
      case 'settle':
        return { ok: true, isMoved: this.#settle(call.ref, call.makerAddress, call.outcome, nowMs) };
      case 'withdraw': {
        if (this.book.holds.has(call.ref)) return this.#heldAgain(call.ref, call.account, 'pending_withdrawal', call.amountMicros);
        if (this.book.available(call.account) < call.amountMicros) return refused('INSUFFICIENT_BALANCE');
        const { account } = call;
        this.#move(
          'withdraw',
          call.ref,
          'request',
          { account, bucket: 'available' },
          { account, bucket: 'pending_withdrawal' },
          call.amountMicros,
          nowMs,
        );
        this.#hold(call.ref, { account, bucket: 'pending_withdrawal', amountMicros: call.amountMicros });
        return { ok: true };
      }
      case 'finish_withdrawal':
        return this.#finishWithdrawal(call, nowMs);
      case 'open_pool':
        return this.#openPool(call.contestId, call.amountMicros, nowMs);
      case 'collect':
        return { ok: true, isMoved: this.#collect(call.contestId, call.ref, nowMs) };
      case 'pay_prize':
        return this.#payPrize(call, nowMs);
      case 'close_pool': {
        const ref = poolRef(call.contestId);
        const pool = this.book.holds.get(ref);
        if (pool === undefined) return { ok: true, isMoved: false };
        if (pool.amountMicros < call.expectedMicros) return refused('POOL_SHORT');
        assert.equal(pool.amountMicros, call.expectedMicros, `${ref} holds more than its contest collected`);
        if (pool.amountMicros > 0n)
          this.#move(
            'pool_return',
            ref,
            'pool_return',
            { account: PROTOCOL, bucket: 'committed' },
            { account: PROTOCOL, bucket: 'available' },
            pool.amountMicros,
            nowMs,
          );
        this.#hold(ref, null);
        return { ok: true, isMoved: true };
      }
      default: {
        const unknown: never = call;
        throw new Error(`unknown money call ${JSON.stringify(unknown)}`);
      }
    }
  }

  /**
   * Decided by the key's owner (the caller routes a credit by ownerOf(creditRef(key))). Same key and content:
   * a replay, nothing moves. Same key, other content: a conflict. The account may live elsewhere: the credit
   * then travels on the channel, durable here before the caller hears.
   */
  #credit(account: AccountId, amountMicros: bigint, key: string, stored: CreditKeyUse | undefined, nowMs: number): MoneyAnswer {
    assert.ok(this.book.owns(creditRef(key)), `credit key ${key} decided by owner ${this.book.self}, not its owner`);
    const used = this.book.creditKeys.get(key) ?? stored;
    if (used !== undefined) {
      return used.account === account && used.amountMicros === amountMicros
        ? { ok: true, isReplay: true }
        : refused('IDEMPOTENCY_CONFLICT');
    }
    this.#emit({ t: 'credit_key', key, account, amountMicros });
    this.#move('credit', creditRef(key), 'credit', null, { account, bucket: 'available' }, amountMicros, nowMs);
    return { ok: true, isReplay: false };
  }

  /**
   * The operator's end of a withdrawal, decided here once: its pending hold is the proof it has not ended yet.
   * Once it has, the same end again is a repeat (nothing moves) and the other end is refused as a conflict
   * with how the money went; so is any end when how it went is unknown (a host without a read model).
   */
  #finishWithdrawal(call: Extract<MoneyCall, { op: 'finish_withdrawal' }>, nowMs: number): MoneyAnswer {
    const hold = this.book.holds.get(call.ref);
    if (hold === undefined || hold.bucket !== 'pending_withdrawal')
      return call.wasCompleted === call.isCompleted ? { ok: true, isMoved: false } : refused('IDEMPOTENCY_CONFLICT');
    const from: Side = { account: hold.account, bucket: 'pending_withdrawal' };
    if (call.isCompleted) this.#move('withdraw_complete', call.ref, 'complete', from, null, hold.amountMicros, nowMs);
    else this.#move('withdraw_fail', call.ref, 'fail', from, { account: hold.account, bucket: 'available' }, hold.amountMicros, nowMs);
    this.#hold(call.ref, null);
    return { ok: true, isMoved: true };
  }

  /** The protocol's owner: a new contest's pool leaves the protocol's available (a pool of 0 is held too). */
  #openPool(contestId: string, amountMicros: bigint, nowMs: number): MoneyAnswer {
    const ref = poolRef(contestId);
    assert.ok(this.book.owns(PROTOCOL), `pool ${ref} opened by owner ${this.book.self}, not the protocol's`);
    if (this.book.holds.has(ref)) return { ok: true, isReplay: true };
    if (this.book.available(PROTOCOL) < amountMicros) return refused('INSUFFICIENT_BALANCE');
    if (amountMicros > 0n)
      this.#move(
        'pool',
        ref,
        'pool',
        { account: PROTOCOL, bucket: 'available' },
        { account: PROTOCOL, bucket: 'committed' },
        amountMicros,
        nowMs,
      );
    this.#hold(ref, { account: PROTOCOL, bucket: 'committed', amountMicros });
    return { ok: true, isReplay: false };
  }

  /** The entry's owner: its reserved stake goes to the pot, wherever the protocol lives. False when collected (or refunded) already. */
  #collect(contestId: string, ref: string, nowMs: number): boolean {
    const stake = this.book.holds.get(ref);
    if (stake === undefined || stake.bucket !== 'reserved') return false;
    this.#hold(ref, null);
    this.#move(
      'collect',
      ref,
      'collect',
      { account: stake.account, bucket: 'reserved' },
      { account: PROTOCOL, bucket: 'committed' },
      stake.amountMicros,
      nowMs,
      poolRef(contestId),
    );
    return true;
  }

  #payPrize(call: Extract<MoneyCall, { op: 'pay_prize' }>, nowMs: number): MoneyAnswer {
    const ref = poolRef(call.contestId);
    const pool = this.book.holds.get(ref);
    assert.ok(pool !== undefined, `prize of ${call.ref} from ${ref}, which is not open`);
    if (this.book.prizesPaid.get(ref)?.has(call.ref) === true) return { ok: true, isMoved: false };
    if (pool.amountMicros < call.amountMicros) return refused('POOL_SHORT');
    this.#hold(ref, { ...pool, amountMicros: pool.amountMicros - call.amountMicros });
    this.#emit({ t: 'prize', poolRef: ref, ref: call.ref });
    if (call.amountMicros > 0n) {
      const winner: Side = { account: userAccount(call.userId), bucket: 'available' };
      this.#move('prize', call.ref, 'prize', { account: PROTOCOL, bucket: 'committed' }, winner, call.amountMicros, nowMs);
    }
    return { ok: true, isMoved: true };
  }

  /** A pool's hold grows by a stake collected into it (here, or arrived on a channel). */
  #addToPool(ref: string, amountMicros: bigint): void {
    const pool = this.book.holds.get(ref);
    assert.ok(pool !== undefined, `stake collected into ${ref}, which is not open`);
    this.#hold(ref, { ...pool, amountMicros: pool.amountMicros + amountMicros });
  }

  #release(ref: string, hold: Hold, nowMs: number): void {
    const { account } = hold;
    this.#move('release', ref, 'release', { account, bucket: 'reserved' }, { account, bucket: 'available' }, hold.amountMicros, nowMs);
    this.#hold(ref, null);
  }

  /**
   * A call for a reference that already holds money: the same call again (a caller that heard nothing sent it
   * once more, as a transport across machines does) is answered as it was, moving nothing; anything else
   * under that reference is a conflict.
   */
  #heldAgain(ref: string, account: AccountId, bucket: Hold['bucket'], amountMicros: bigint): MoneyAnswer {
    const hold = this.book.holds.get(ref)!;
    const isSame = hold.account === account && hold.bucket === bucket && hold.amountMicros === amountMicros;
    return isSame ? REPLAYED : refused('IDEMPOTENCY_CONFLICT');
  }

  /**
   * A fill of a reference already filled, or being filled, or holding no reservation. The same fill again is
   * answered as the first: at once if it committed, with the first's answer if it waits for its lock (it is
   * not asked again: two locks for one fill). A fill of no reservation (its RFQ ended) is ABORTED, never a
   * thrown error: a call from across the network must not stop the owner. 'new': none of these.
   */
  #fillAgain(caller: Caller, call: Extract<MoneyCall, { op: 'fill' }>): MoneyAnswer | null | 'new' {
    for (const fill of this.#inFlight.values()) {
      if (fill.ref !== call.ref) continue;
      const isSame =
        fill.filledMicros === call.filledMicros && fill.makerAddress === call.makerAddress && fill.liabilityMicros === call.liabilityMicros;
      if (!isSame) return refused('IDEMPOTENCY_CONFLICT');
      // Aborted too: it is told ABORTED with the first when the lock's answer comes, and its answer kept once.
      fill.callers.push(caller);
      return null;
    }
    const hold = this.book.holds.get(call.ref);
    if (hold === undefined) return refused('ABORTED');
    if (hold.bucket === 'reserved') return 'new';
    return hold.bucket === 'at_risk' && hold.amountMicros === call.filledMicros ? REPLAYED : refused('IDEMPOTENCY_CONFLICT');
  }

  /** The answer to a fill that waited for its maker's lock, to its caller and to every repeat of it. */
  #answerFill(fill: FillInFlight, answer: MoneyAnswer): void {
    const kept = new Set<string>(); // a repeat of the fill's own request waits beside it: one answer kept per request
    for (const caller of fill.callers) {
      if (caller.requestId !== undefined && !kept.has(caller.requestId)) {
        kept.add(caller.requestId);
        this.#emit({ t: 'reply', id: caller.requestId, answer });
      }
      this.#output({ to: 'client', callId: caller.callId, answer });
    }
  }

  /** A maker on this owner: the whole fill now. Elsewhere: its lock is asked for, and the answer comes later. */
  #fill(caller: Caller, call: Extract<MoneyCall, { op: 'fill' }>, nowMs: number, facts: readonly BlindWrite[]): MoneyAnswer | null {
    const maker = makerAccount(call.makerAddress);
    if (call.liabilityMicros === 0n || this.book.owns(maker)) {
      if (this.book.available(maker) < call.liabilityMicros) return refused('UNCOVERED');
      this.#commitFill(call.ref, call.filledMicros, nowMs);
      if (call.liabilityMicros > 0n) {
        this.#move(
          'lock',
          call.ref,
          'lock',
          { account: maker, bucket: 'available' },
          { account: maker, bucket: 'locked' },
          call.liabilityMicros,
          nowMs,
        );
        this.#hold(lockRef(call.ref), { account: maker, bucket: 'locked', amountMicros: call.liabilityMicros });
      }
      return { ok: true };
    }
    const key = `${lockRef(call.ref)}#${++this.#lockAttempts}`;
    this.#inFlight.set(key, { callers: [caller], ...call, askedAtMs: nowMs, isAborted: false, facts });
    this.#output({
      to: 'peer',
      owner: this.book.ownerOf(maker),
      message: { m: 'lock', key, ref: call.ref, makerAddress: call.makerAddress, amountMicros: call.liabilityMicros, atMs: nowMs },
    });
    return null;
  }

  /** The taker's side of a fill: the filled wager goes at risk, the rest of the reservation back to available. */
  #commitFill(ref: string, filledMicros: bigint, nowMs: number): void {
    const hold = this.book.holds.get(ref);
    if (hold === undefined || hold.bucket !== 'reserved') throw new Error(`fill of ${ref}, which holds no reservation`);
    if (filledMicros <= 0n || filledMicros > hold.amountMicros) throw new Error(`fill of ${ref} outside its reservation`);
    const { account } = hold;
    this.#move('fill', ref, 'fill', { account, bucket: 'reserved' }, { account, bucket: 'at_risk' }, filledMicros, nowMs);
    const restMicros = hold.amountMicros - filledMicros;
    if (restMicros > 0n)
      this.#move('release', ref, 'release', { account, bucket: 'reserved' }, { account, bucket: 'available' }, restMicros, nowMs);
    this.#hold(ref, { account, bucket: 'at_risk', amountMicros: filledMicros });
  }

  /** The maker's owner: phase one of a remote fill. */
  #grantLock(from: number, lock: Extract<PeerMessage, { m: 'lock' }>): void {
    const maker = makerAccount(lock.makerAddress);
    const isGranted = this.book.available(maker) >= lock.amountMicros;
    if (isGranted) {
      this.#move(
        'lock',
        lock.key,
        'lock',
        { account: maker, bucket: 'available' },
        { account: maker, bucket: 'locked' },
        lock.amountMicros,
        lock.atMs,
      );
      this.#hold(lock.key, {
        account: maker,
        bucket: 'locked',
        amountMicros: lock.amountMicros,
        pendingFor: { owner: from, ref: lock.ref, atMs: lock.atMs },
      });
    }
    this.#output({ to: 'peer', owner: from, message: { m: 'lock_reply', key: lock.key, isGranted } });
  }

  /** The taker's owner: phase two. */
  #onLockReply(maker: number, key: string, isGranted: boolean, nowMs: number): void {
    const fill = this.#inFlight.get(key);
    if (fill !== undefined) this.#inFlight.delete(key);
    if (!isGranted) {
      if (fill !== undefined) this.#answerFill(fill, refused(fill.isAborted ? 'ABORTED' : 'UNCOVERED'));
      return;
    }
    const hold = fill === undefined ? undefined : this.book.holds.get(fill.ref);
    if (fill === undefined || fill.isAborted || hold === undefined || hold.bucket !== 'reserved') {
      // Nobody waits for this lock any more (timed out, aborted, or asked before a restart): it goes back.
      this.#send(maker, { c: 'void_lock', key }, nowMs);
      if (fill !== undefined) this.#answerFill(fill, refused('ABORTED'));
      return;
    }
    this.#commitFill(fill.ref, fill.filledMicros, nowMs);
    this.#facts(fill.facts);
    this.#send(maker, { c: 'post_lock', key, ref: fill.ref }, nowMs);
    this.#answerFill(fill, { ok: true });
  }

  /**
   * Asked by the maker's owner about lock `key`: true when its fill will never be committed here. Not while
   * the fill is in flight, nor while this owner's decision about it is on the channel (the answer is released
   * only after this owner's journal is durable past everything it decided before, like every output).
   */
  #isNeverFilled(maker: number, key: string): boolean {
    if (this.#inFlight.has(key)) return false;
    const outbox = this.book.outboxes.get(maker);
    const decided = outbox?.entries.some(({ command }) => (command.c === 'post_lock' || command.c === 'void_lock') && command.key === key);
    return decided !== true;
  }

  #voidLock(key: string, nowMs: number): void {
    const hold = this.book.holds.get(key);
    if (hold?.pendingFor === undefined) return; // posted or voided already
    const { account } = hold;
    this.#move('unlock', key, 'unlock', { account, bucket: 'locked' }, { account, bucket: 'available' }, hold.amountMicros, nowMs);
    this.#hold(key, null);
  }

  /**
   * Settles a filled position (contract section 11): the stake here, the liability where the maker lives.
   * False when it was settled already (its at-risk hold is gone).
   */
  #settle(ref: string, makerAddress: string, outcome: PositionOutcome, nowMs: number): boolean {
    const stake = this.book.holds.get(ref);
    if (stake === undefined || stake.bucket !== 'at_risk') return false;
    const taker = stake.account;
    const maker = makerAccount(makerAddress);
    this.#hold(ref, null);
    const to: Side = { account: outcome === 'lost' ? maker : taker, bucket: 'available' };
    this.#move('settle_stake', ref, 'settle_stake', { account: taker, bucket: 'at_risk' }, to, stake.amountMicros, nowMs);
    if (this.book.owns(maker)) this.#settleLock(ref, outcome, taker, nowMs);
    else this.#send(this.book.ownerOf(maker), { c: 'settle_lock', ref, outcome, taker, atMs: nowMs }, nowMs);
    return true;
  }

  /** The maker's owner: a settled position's liability, once (its lock's hold is the proof). */
  #settleLock(ref: string, outcome: PositionOutcome, taker: AccountId, atMs: number): void {
    const key = lockRef(ref);
    const lock = this.book.holds.get(key);
    if (lock === undefined) return; // no liability (odds of 1), or settled already
    this.#hold(key, null);
    const to: Side = { account: outcome === 'won' ? taker : lock.account, bucket: 'available' };
    this.#move('settle_liability', ref, 'settle_liability', { account: lock.account, bucket: 'locked' }, to, lock.amountMicros, atMs);
  }

  // ---- channels ------------------------------------------------------------------------------------------

  #send(peer: number, command: ChannelCommand, nowMs: number): void {
    const seq = this.book.outbox(peer).nextSeq;
    if (!this.#waitingSinceMs.has(peer)) this.#waitingSinceMs.set(peer, nowMs);
    this.#emit({ t: 'send', to: peer, seq, command });
    this.#output({ to: 'peer', owner: peer, message: { m: 'command', seq, command } });
  }

  /** A command in order is applied and acknowledged; a repeat is acknowledged again; one past a gap waits for the resend. */
  #receive(from: number, seq: number, command: ChannelCommand, nowMs: number): void {
    const applied = this.book.received.get(from) ?? 0;
    if (seq === applied + 1) {
      this.#apply(command, nowMs);
      this.#emit({ t: 'received', from, seq });
    } else if (seq > applied) return;
    this.#output({ to: 'peer', owner: from, message: { m: 'ack', seq: this.book.received.get(from) ?? 0 } });
  }

  #apply(command: ChannelCommand, nowMs: number): void {
    switch (command.c) {
      case 'credit':
        this.#emit({ t: 'transfer', transfer: command.transfer, half: 'credit' });
        if (command.poolRef !== undefined) this.#addToPool(command.poolRef, command.transfer.amountMicros);
        return;
      case 'post_lock': {
        const hold = this.book.holds.get(command.key);
        if (hold?.pendingFor === undefined) return;
        this.#hold(command.key, null);
        return this.#hold(lockRef(command.ref), { account: hold.account, bucket: 'locked', amountMicros: hold.amountMicros });
      }
      case 'void_lock':
        return this.#voidLock(command.key, nowMs);
      case 'settle_lock':
        return this.#settleLock(command.ref, command.outcome, command.taker, command.atMs);
      default: {
        const unknown: never = command;
        throw new Error(`unknown channel command ${JSON.stringify(unknown)}`);
      }
    }
  }

  // ---- primitives ----------------------------------------------------------------------------------------

  /**
   * One transfer: whole when this owner owns both sides, else its debit here and its credit sent to the other.
   * `intoPool`: the credit is a stake joining that contest pool's hold, wherever the pool is.
   */
  #move(
    kind: Transfer['kind'],
    ref: string,
    step: string,
    debit: Side | null,
    credit: Side | null,
    amountMicros: bigint,
    atMs: number,
    intoPool?: string,
  ): void {
    const transfer: Transfer = { id: transferId(ref, step), kind, ref, debit, credit, amountMicros, atMs };
    const isCreditElsewhere = credit !== null && !this.book.owns(credit.account);
    const half: Half = isCreditElsewhere ? 'debit' : 'both';
    this.#emit({ t: 'transfer', transfer, half });
    if (isCreditElsewhere) {
      const command: ChannelCommand = intoPool === undefined ? { c: 'credit', transfer } : { c: 'credit', transfer, poolRef: intoPool };
      this.#send(this.book.ownerOf(credit.account), command, atMs);
    } else if (intoPool !== undefined) this.#addToPool(intoPool, amountMicros);
  }

  #facts(facts: readonly BlindWrite[]): void {
    for (const write of facts) this.#emit({ t: 'fact', write });
  }

  #hold(ref: string, hold: Hold | null): void {
    this.#emit({ t: 'hold', ref, hold });
  }

  #emit(effect: Effect): void {
    this.book.apply(effect);
    this.#step.effects.push(effect);
  }

  #output(output: Output): void {
    this.#step.outputs.push(output);
  }

  #take(): Step {
    const step = this.#step;
    this.#step = { effects: [], outputs: [] };
    return step;
  }
}

const refused = (code: MoneyRefusal): MoneyAnswer => ({ ok: false, code });
/** A call made again, answered as it was the first time: nothing moves, so its facts are not written again. */
const REPLAYED: MoneyAnswer = { ok: true, isReplay: true, isMoved: false };
