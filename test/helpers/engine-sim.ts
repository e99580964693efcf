// A seeded simulator of the engine's owners, in the style of TigerBeetle's VOPR: several owner actors
// (src/engine/owner.ts) in one process on a clock the simulator moves, each with a journal in the real record
// format (src/wal/record.ts) on a simulated disk, a network that delivers each pair's messages in order but
// loses what is sent to an owner that is down, and a driver playing takers, makers and the operator. At
// random it flushes disks, snapshots owners, crashes them (the unflushed tail of the journal lost, partly
// written, or torn inside a record) and restarts them from snapshot and journal. Then it heals everything and
// checks: the ledger (src/engine/check.ts) across the owners' journals, every acknowledged operation present,
// every RFQ's reservation ended once, every two-phase lock posted or voided, and no money left held.
//
// Deterministic for a seed (no wall clock, no Math.random): a failing seed replays.
import { createHash } from 'node:crypto';
import { creditRef, makerAccount, PROTOCOL, userAccount, type AccountId } from '../../src/records/ledger.js';
import { Book } from '../../src/engine/book.js';
import { checkOwners, type LedgerCheck } from '../../src/engine/check.js';
import { decodeEffects, decodeSnapshot, encodeEffects, encodeSnapshot } from '../../src/engine/codec.js';
import type { Effect } from '../../src/engine/effects.js';
import { isAskOnly, MoneyOwner, type OwnerLimits, type Output, type PeerMessage, type Step } from '../../src/engine/owner.js';
import type { MoneyAnswer, MoneyCall } from '../../src/ledger/money-ops.js';
import { encodeFileHeader, encodeRecordInto, FILE_HEADER_BYTES, recordBytes, scanRecords } from '../../src/wal/record.js';
import { prng, type Rng } from '../../scripts/fuzz/gen.js';

export interface SimOptions {
  seed: number;
  owners: number;
  operations: number;
  users: number;
  makers: number;
  /** Chance per operation that an owner crashes (when fewer than all are down). */
  crashChance: number;
  /** A planted fault, to show the checks catch it: the fill's owner answers every `fate` with "voided". */
  voidBlindly?: boolean;
  /** A planted fault: the maker's owner sends a lock's grant before its record is durable (only asks may). */
  grantsBeforeDurable?: boolean;
  /**
   * Clients that send a call again before its answer, as a transport across machines does (at least once):
   * the chance that a call is repeated, at a random later moment while it is unanswered. The first answer
   * stands; every later one is dropped, as a caller that already heard drops it.
   */
  repeatChance?: number;
}

export interface SimReport {
  seed: number;
  crashes: number;
  acked: {
    credits: number;
    reservations: number;
    fills: number;
    remoteFills: number;
    settlements: number;
    withdrawals: number;
    contests: number;
    entries: number;
    prizes: number;
  };
  /** Fills refused, by code (UNCOVERED, OWNER_UNAVAILABLE, ABORTED). */
  fillRefusals: Record<string, number>;
  check: LedgerCheck;
  failures: string[];
  /** Calls sent again before their answer (options.repeatChance). */
  repeated: number;
}

const LIMITS: OwnerLimits = { lockTimeoutMs: 400, lockQueryMs: 200, resendMs: 100, resendPerTick: 64 };

/** Users and makers spread over the owners by a hash of the account; the protocol on owner 0. */
export function ownerOfAccount(owners: number): (account: AccountId) => number {
  return (account) => (account === PROTOCOL ? 0 : createHash('sha1').update(account).digest().readUInt32LE(0) % owners);
}

/** One owner's disk: its journal file (flushed up to `syncedBytes`) and its last snapshot (written atomically). */
class SimDisk {
  bytes = Buffer.alloc(1 << 16);
  length = FILE_HEADER_BYTES;
  syncedBytes = FILE_HEADER_BYTES;
  snapshot: Buffer | null = null;

  constructor() {
    encodeFileHeader(1).copy(this.bytes, 0);
  }

  append(seq: number, payload: Buffer): void {
    const need = this.length + recordBytes(payload.length);
    if (need > this.bytes.length) {
      const grown = Buffer.alloc(Math.max(need, this.bytes.length * 2));
      this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    this.length = encodeRecordInto(this.bytes, this.length, seq, payload);
  }

  /** What survives a crash: everything flushed, then some of the rest, cut anywhere (inside a record too). */
  crash(rng: Rng): void {
    const kept = this.syncedBytes + Math.floor(rng() * (this.length - this.syncedBytes + 1));
    this.bytes.fill(0, kept, this.length);
    this.length = kept;
    if (rng() < 0.3 && kept + 8 <= this.bytes.length) {
      // Garbage where the next record was going: a sector written with something else.
      for (let i = kept; i < kept + 8; i++) this.bytes[i] = Math.floor(rng() * 256);
      this.length = kept + 8;
    }
  }

  /** Every whole record from the start; cuts a torn tail as the journal does at open. */
  records(): Array<{ seq: number; effects: Effect[] }> {
    const out: Array<{ seq: number; effects: Effect[] }> = [];
    const scan = scanRecords(this.bytes.subarray(FILE_HEADER_BYTES, this.length), 1, (seq, payload) =>
      out.push({ seq, effects: decodeEffects(payload) }),
    );
    this.length = FILE_HEADER_BYTES + scan.endOffset;
    this.bytes.fill(0, this.length);
    this.syncedBytes = Math.min(this.syncedBytes, this.length);
    return out;
  }
}

interface Gated {
  seq: number;
  step: Step;
}

/** An owner's host: journal appends, outputs held until the journal is flushed past them, crash and recovery. */
class SimOwner {
  readonly disk = new SimDisk();
  owner: MoneyOwner | null;
  headSeq = 0;
  syncedSeq = 0;
  gated: Gated[] = [];

  constructor(
    readonly index: number,
    private readonly ownerOf: (account: AccountId) => number,
    /** What may leave before the journal is flushed past it (owner.ts isAskOnly, unless a fault is planted). */
    private readonly leavesAtOnce: (output: Output) => boolean,
  ) {
    this.owner = new MoneyOwner(new Book(index, ownerOf), LIMITS);
  }

  get isUp(): boolean {
    return this.owner !== null;
  }

  /**
   * Journals the step's effects; returns the outputs that may go now: all of them when the journal is flushed
   * past what the owner decided, else only those that ask without telling a decision (as owner-host.ts).
   */
  take(step: Step): Step['outputs'] {
    if (step.effects.length > 0) {
      this.headSeq++;
      this.disk.append(this.headSeq, encodeEffects(step.effects));
    }
    if (this.headSeq <= this.syncedSeq) return step.outputs;
    this.gated.push({ seq: this.headSeq, step: { ...step, outputs: step.outputs.filter((output) => !this.leavesAtOnce(output)) } });
    return step.outputs.filter(this.leavesAtOnce);
  }

  flush(): Step['outputs'] {
    this.disk.syncedBytes = this.disk.length;
    this.syncedSeq = this.headSeq;
    const released = this.gated.flatMap(({ step }) => step.outputs);
    this.gated = [];
    return released;
  }

  snapshot(): Step['outputs'] {
    const released = this.flush();
    this.disk.snapshot = encodeSnapshot(this.owner!.book, this.syncedSeq);
    return released;
  }

  crash(rng: Rng): void {
    this.disk.crash(rng);
    this.owner = null;
    this.gated = [];
  }

  /** Snapshot, then the journal after it; then the RFQs that were active are failed. */
  restart(nowMs: number): Step['outputs'] {
    const records = this.disk.records();
    let book = new Book(this.index, this.ownerOf);
    let fromSeq = 0;
    if (this.disk.snapshot !== null) ({ book, seq: fromSeq } = decodeSnapshot(this.disk.snapshot, this.ownerOf));
    for (const { seq, effects } of records) if (seq > fromSeq) for (const effect of effects) book.apply(effect);
    // A snapshot is taken only of flushed state, so the journal never ends before it; what survived is on disk.
    this.headSeq = Math.max(fromSeq, records.at(-1)?.seq ?? 0);
    this.syncedSeq = this.headSeq;
    this.disk.syncedBytes = this.disk.length;
    this.owner = new MoneyOwner(book, LIMITS);
    return this.take(this.owner.recoverInterrupted(nowMs));
  }

  journal(): Effect[][] {
    return this.disk.records().map(({ effects }) => effects);
  }
}

interface Rfq {
  ref: string;
  userId: string;
  owner: number;
  wagerMicros: bigint;
  fillCallId: number | null;
  makerAddress: string | null;
  liabilityMicros: bigint;
}

type Pending =
  | { kind: 'credit'; key: string; account: AccountId; amountMicros: bigint }
  | { kind: 'reserve'; rfq: Rfq }
  | { kind: 'fill'; rfq: Rfq }
  | { kind: 'settle'; ref: string }
  | { kind: 'withdraw'; ref: string; owner: number }
  | { kind: 'contest'; contest: Contest; step: ContestStep; entry?: Entry; prize?: Prize }
  | { kind: 'other' };

type ContestStep = 'open' | 'enter' | 'refund' | 'collect' | 'prize' | 'close';

interface Entry {
  ref: string;
  userId: string;
  stakeMicros: bigint;
  /** Refunded (void) or collected (resolution): the owner said so, now or on an earlier attempt. */
  isDone: boolean;
}

interface Prize {
  ref: string;
  userId: string;
  amountMicros: bigint;
  isPaid: boolean;
}

/** A contest as its lane sees it: open, then settling (voided or resolved) step by step, then closed. */
interface Contest {
  id: string;
  poolMicros: bigint;
  phase: 'opening' | 'open' | 'settling' | 'closed';
  isVoid: boolean;
  entries: Entry[];
  /** Decided once every stake is collected (resolution only). */
  prizes: Prize[] | null;
}

export function simulate(options: SimOptions): SimReport {
  const rng = prng(options.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;
  const ownerOf = ownerOfAccount(options.owners);
  const leavesAtOnce =
    options.grantsBeforeDurable === true
      ? (output: Output) => isAskOnly(output) || (output.to === 'peer' && output.message.m === 'lock_reply')
      : isAskOnly;
  const owners = Array.from({ length: options.owners }, (_, i) => new SimOwner(i, ownerOf, leavesAtOnce));
  const users = Array.from({ length: options.users }, (_, i) => `u${i}`);
  const makers = Array.from({ length: options.makers }, (_, i) => `0x${i.toString(16).padStart(40, 'a')}`);
  const network = new Map<string, Array<{ from: number; to: number; message: PeerMessage }>>();
  const downUntil = new Map<number, number>();
  let nowMs = 1_000_000;
  let nextCallId = 1;
  let nextRef = 1;
  let crashes = 0;
  const pending = new Map<number, Pending & { owner: number }>();
  const active = new Map<string, Rfq>();
  const makerOfFill = new Map<string, { makerAddress: string; liabilityMicros: bigint }>();
  /** Acknowledged fills not yet settled: reference and the taker's owner. */
  const positions: Array<{ ref: string; owner: number }> = [];
  const withdrawals: Array<{ ref: string; owner: number }> = [];
  const acked = {
    credits: new Map<string, { account: AccountId; amountMicros: bigint }>(),
    reservations: new Set<string>(),
    fills: new Set<string>(),
    settlements: new Set<string>(),
    withdrawals: new Set<string>(),
    prizes: new Set<string>(),
  };
  let remoteFills = 0;
  const refusals = new Map<string, number>();
  const failures: string[] = [];

  const route = (from: number, outputs: Step['outputs']) => {
    for (const output of outputs) {
      if (output.to === 'peer') {
        let message = output.message;
        if (options.voidBlindly === true && message.m === 'fate_reply') message = { ...message, isVoided: true };
        const key = `${from}>${output.owner}`;
        const queue = network.get(key) ?? [];
        queue.push({ from, to: output.owner, message });
        network.set(key, queue);
      } else answer(output.callId, output.answer);
    }
  };

  /** Calls to send again while unanswered (options.repeatChance), and the calls answered already. */
  const repeats: Array<{ owner: number; body: MoneyCall; what: Pending & { owner: number }; requestId: string }> = [];
  const answered = new WeakSet<object>();
  let repeated = 0;

  /** The call's id, or null when its owner is down (a 503: the caller knows nothing was done). */
  const call = (owner: number, body: MoneyCall, what: Pending): number | null => {
    const host = owners[owner]!;
    if (!host.isUp) return null;
    const callId = nextCallId++;
    const entry = { ...what, owner };
    pending.set(callId, entry);
    // Clients that may repeat are clients across the network: each call has a request id of its own.
    const requestId = options.repeatChance === undefined ? undefined : `request-${callId}`;
    if (requestId !== undefined && rng() < options.repeatChance!) repeats.push({ owner, body, what: entry, requestId });
    route(owner, host.take(host.owner!.call(callId, body, nowMs, [], requestId)));
    return callId;
  };

  /** A call sent again, unanswered so far: whichever of its sends is answered first answers it. */
  const repeat = () => {
    const { owner, body, what, requestId } = repeats.splice(Math.floor(rng() * repeats.length), 1)[0]!;
    const host = owners[owner]!;
    if (answered.has(what) || !host.isUp) return;
    const callId = nextCallId++;
    pending.set(callId, what);
    repeated++;
    route(owner, host.take(host.owner!.call(callId, body, nowMs, [], requestId)));
  };

  const answer = (callId: number, result: MoneyAnswer): void => {
    const what = pending.get(callId);
    if (what === undefined) return;
    pending.delete(callId);
    if (answered.has(what)) return; // a repeat's answer, after the first
    answered.add(what);
    switch (what.kind) {
      case 'credit':
        if (result.ok && result.isReplay !== true) acked.credits.set(what.key, { account: what.account, amountMicros: what.amountMicros });
        return;
      case 'reserve':
        if (result.ok) {
          acked.reservations.add(what.rfq.ref);
          active.set(what.rfq.ref, what.rfq);
        }
        return;
      case 'fill': {
        const rfq = what.rfq;
        rfq.fillCallId = null;
        if (!active.has(rfq.ref)) return; // ended meanwhile (aborted, or its owner restarted)
        if (result.ok) {
          acked.fills.add(rfq.ref);
          if (ownerOf(makerAccount(rfq.makerAddress!)) !== rfq.owner && rfq.liabilityMicros > 0n) remoteFills++;
          active.delete(rfq.ref);
          positions.push({ ref: rfq.ref, owner: rfq.owner });
        } else {
          refusals.set(result.code, (refusals.get(result.code) ?? 0) + 1);
          endRfq(rfq);
        }
        return;
      }
      case 'settle':
        if (result.ok && result.isMoved === true) acked.settlements.add(what.ref);
        return;
      case 'withdraw':
        if (result.ok) {
          acked.withdrawals.add(what.ref);
          withdrawals.push({ ref: what.ref, owner: what.owner });
        }
        return;
      case 'contest':
        return answerContest(what, result);
      case 'other':
        return;
    }
  };

  const endRfq = (rfq: Rfq) => {
    active.delete(rfq.ref);
    call(rfq.owner, { op: 'release', ref: rfq.ref }, { kind: 'other' });
  };

  /** Delivers up to `count` messages, each the head of a pair's queue chosen at random (pairs stay in order). */
  const deliver = (count: number) => {
    for (let i = 0; i < count; i++) {
      const queues = [...network.values()].filter((q) => q.length > 0);
      if (queues.length === 0) return;
      const envelope = pick(queues).shift()!;
      const host = owners[envelope.to]!;
      if (host.isUp) route(envelope.to, host.take(host.owner!.peer(envelope.from, envelope.message, nowMs)));
    }
  };

  const crash = (index: number) => {
    const host = owners[index]!;
    host.crash(rng);
    crashes++;
    downUntil.set(index, nowMs + 1 + Math.floor(rng() * 200));
    // Calls in flight to it are lost (their callers never hear); its RFQs end with the restart.
    for (const [callId, what] of pending) if (what.owner === index) pending.delete(callId);
    for (const rfq of [...active.values()]) if (rfq.owner === index) active.delete(rfq.ref);
    // What it had sent and was still on the wire may arrive; what is sent to it meanwhile is lost (deliver).
  };

  const restartDue = (isAll: boolean) => {
    for (const [index, untilMs] of [...downUntil]) {
      if (!isAll && untilMs > nowMs) continue;
      downUntil.delete(index);
      route(index, owners[index]!.restart(nowMs));
    }
  };

  const randomAccount = (): AccountId => {
    const roll = rng();
    return roll < 0.55 ? userAccount(pick(users)) : roll < 0.9 ? makerAccount(pick(makers)) : PROTOCOL;
  };

  // Contests: each step is retried until its owner answers (a crash loses calls); every step is idempotent.
  const contests: Contest[] = [];
  const protocolOwner = ownerOf(PROTOCOL);
  const contestCall = (owner: number, body: MoneyCall, contest: Contest, step: ContestStep, more: { entry?: Entry; prize?: Prize } = {}) =>
    call(owner, body, { kind: 'contest', contest, step, ...more });
  /** Issues what the contest's settlement still needs; the answers move it on (answerContest). */
  const progress = (contest: Contest) => {
    if (contest.phase === 'opening') {
      contestCall(protocolOwner, { op: 'open_pool', contestId: contest.id, amountMicros: contest.poolMicros }, contest, 'open');
      return;
    }
    if (contest.phase !== 'settling') return;
    const open = contest.entries.filter((entry) => !entry.isDone);
    for (const entry of open) {
      const owner = ownerOf(userAccount(entry.userId));
      if (contest.isVoid) contestCall(owner, { op: 'release', ref: entry.ref }, contest, 'refund', { entry });
      else contestCall(owner, { op: 'collect', contestId: contest.id, ref: entry.ref }, contest, 'collect', { entry });
    }
    if (open.length > 0) return;
    if (!contest.isVoid && contest.prizes === null) {
      // The pot: the pool and every stake; winners share a part of it (the rest goes back at the close).
      const potMicros = contest.poolMicros + contest.entries.reduce((sum, entry) => sum + entry.stakeMicros, 0n);
      const winners = contest.entries.filter(() => rng() < 0.4);
      const shareMicros = winners.length === 0 ? 0n : (potMicros * BigInt(Math.floor(rng() * 100))) / 100n / BigInt(winners.length);
      contest.prizes = winners.map((entry) => ({ ref: entry.ref, userId: entry.userId, amountMicros: shareMicros, isPaid: false }));
    }
    const unpaid = (contest.prizes ?? []).filter((prize) => !prize.isPaid);
    for (const prize of unpaid) {
      const body: MoneyCall = {
        op: 'pay_prize',
        contestId: contest.id,
        ref: prize.ref,
        userId: prize.userId,
        amountMicros: prize.amountMicros,
      };
      contestCall(protocolOwner, body, contest, 'prize', { prize });
    }
    if (unpaid.length > 0) return;
    const collectedMicros = contest.isVoid ? 0n : contest.entries.reduce((sum, entry) => sum + entry.stakeMicros, 0n);
    const paidMicros = (contest.prizes ?? []).reduce((sum, prize) => sum + prize.amountMicros, 0n);
    const expectedMicros = contest.poolMicros + collectedMicros - paidMicros;
    contestCall(protocolOwner, { op: 'close_pool', contestId: contest.id, expectedMicros }, contest, 'close');
  };
  const answerContest = (what: Extract<Pending, { kind: 'contest' }>, result: MoneyAnswer) => {
    const { contest } = what;
    switch (what.step) {
      case 'open':
        if (result.ok) contest.phase = 'open';
        else contest.phase = 'closed'; // the protocol could not fund it: never opened
        return;
      case 'enter':
        if (result.ok && contest.phase === 'open') contest.entries.push(what.entry!);
        // Its stake was held after the contest stopped taking entries: the lane refuses it, and it goes back.
        else if (result.ok) call(ownerOf(userAccount(what.entry!.userId)), { op: 'release', ref: what.entry!.ref }, { kind: 'other' });
        return;
      case 'refund':
      case 'collect':
        if (result.ok) what.entry!.isDone = true;
        return;
      case 'prize':
        if (result.ok) {
          what.prize!.isPaid = true;
          acked.prizes.add(what.prize!.ref);
        }
        return;
      case 'close':
        if (result.ok) contest.phase = 'closed';
        return;
    }
  };

  for (let op = 0; op < options.operations; op++) {
    nowMs += Math.floor(rng() * 4);
    restartDue(false);
    if (repeats.length > 0 && rng() < 0.2) repeat();
    const roll = rng();
    if (roll < 0.08) {
      // A credit: new, replayed, or the same key with other content.
      const account = randomAccount();
      const key = rng() < 0.1 && acked.credits.size > 0 ? pick([...acked.credits.keys()]) : `k${nextRef++}`;
      const amountMicros = BigInt(1 + Math.floor(rng() * 5_000));
      call(ownerOf(creditRef(key)), { op: 'credit', account, amountMicros, key }, { kind: 'credit', key, account, amountMicros });
    } else if (roll < 0.22) {
      const userId = pick(users);
      const rfq: Rfq = {
        ref: `rfq:${nextRef++}`,
        userId,
        owner: ownerOf(userAccount(userId)),
        wagerMicros: BigInt(1 + Math.floor(rng() * 800)),
        fillCallId: null,
        makerAddress: null,
        liabilityMicros: 0n,
      };
      call(rfq.owner, { op: 'reserve', userId, amountMicros: rfq.wagerMicros, ref: rfq.ref }, { kind: 'reserve', rfq });
    } else if (roll < 0.36 && active.size > 0) {
      const rfq = pick([...active.values()]);
      if (rfq.fillCallId !== null) {
        // The RFQ ends otherwise (a market closed, say) while its fill waits for the maker's owner.
        if (rng() < 0.3) {
          call(rfq.owner, { op: 'abort_fill', ref: rfq.ref }, { kind: 'other' });
          endRfq(rfq);
        }
        continue;
      }
      if (rng() < 0.25) {
        endRfq(rfq); // no quote, cancelled, expired
        continue;
      }
      const makerAddress = pick(makers);
      const filledMicros = rfq.wagerMicros - BigInt(Math.floor(rng() * Number(rfq.wagerMicros)));
      const liabilityMicros = BigInt(Math.floor(rng() * (rng() < 0.2 ? 40 : 3) * Number(filledMicros)));
      rfq.makerAddress = makerAddress;
      rfq.liabilityMicros = liabilityMicros;
      makerOfFill.set(rfq.ref, { makerAddress, liabilityMicros });
      rfq.fillCallId = call(rfq.owner, { op: 'fill', ref: rfq.ref, filledMicros, makerAddress, liabilityMicros }, { kind: 'fill', rfq });
    } else if (roll < 0.42 && positions.length > 0) {
      const { ref, owner } = positions.splice(Math.floor(rng() * positions.length), 1)[0]!;
      const { makerAddress } = makerOfFill.get(ref)!;
      const outcome = pick(['won', 'lost', 'voided'] as const);
      call(owner, { op: 'settle', ref, makerAddress, outcome }, { kind: 'settle', ref });
    } else if (roll < 0.47) {
      const account = rng() < 0.6 ? userAccount(pick(users)) : makerAccount(pick(makers)); // the protocol does not withdraw
      const ref = `withdrawal:${nextRef++}`;
      const owner = ownerOf(account);
      call(owner, { op: 'withdraw', account, amountMicros: BigInt(1 + Math.floor(rng() * 600)), ref }, { kind: 'withdraw', ref, owner });
    } else if (roll < 0.5 && withdrawals.length > 0) {
      const { ref, owner } = withdrawals.splice(Math.floor(rng() * withdrawals.length), 1)[0]!;
      call(owner, { op: 'finish_withdrawal', ref, isCompleted: rng() < 0.5 }, { kind: 'other' });
    } else if (roll < 0.75) {
      deliver(1 + Math.floor(rng() * 6));
    } else if (roll < 0.85) {
      const host = pick(owners);
      if (host.isUp) route(host.index, host.flush());
    } else if (roll < 0.93) {
      const host = pick(owners);
      if (host.isUp) route(host.index, host.take(host.owner!.tick(nowMs)));
    } else if (roll < 0.94) {
      const host = pick(owners);
      if (host.isUp) route(host.index, host.snapshot());
    } else if (roll < 0.945) {
      const contest: Contest = {
        id: `c${nextRef++}`,
        poolMicros: BigInt(Math.floor(rng() * 1_000)),
        phase: 'opening',
        isVoid: false,
        entries: [],
        prizes: null,
      };
      contests.push(contest);
      progress(contest);
    } else if (roll < 0.965 && contests.length > 0) {
      const contest = pick(contests);
      if (contest.phase !== 'open') {
        progress(contest);
        continue;
      }
      if (rng() < 0.08) {
        contest.phase = 'settling';
        contest.isVoid = rng() < 0.3;
        progress(contest);
        continue;
      }
      const userId = pick(users);
      const entry: Entry = {
        ref: `contest:${contest.id}:${userId}:${nextRef++}`,
        userId,
        stakeMicros: BigInt(1 + Math.floor(rng() * 300)),
        isDone: false,
      };
      contestCall(
        ownerOf(userAccount(userId)),
        { op: 'reserve', userId, amountMicros: entry.stakeMicros, ref: entry.ref },
        contest,
        'enter',
        { entry },
      );
    } else if (rng() < options.crashChance * 16 && downUntil.size < options.owners - 1) {
      const host = pick(owners);
      if (host.isUp) crash(host.index);
    } else {
      nowMs += Math.floor(rng() * 30);
    }
  }

  // Heal: everyone up, every message delivered, every flush done, every timer run; then end every RFQ, settle
  // every position the disks hold (acknowledged or not) and finish every withdrawal, and heal again.
  const heal = () => {
    for (let round = 0; round < 200; round++) {
      restartDue(true);
      for (const host of owners) route(host.index, host.flush());
      deliver(Number.MAX_SAFE_INTEGER);
      for (const host of owners) route(host.index, host.flush());
      const isQuiet =
        [...network.values()].every((q) => q.length === 0) &&
        owners.every(
          (host) =>
            host.owner!.inFlightCount === 0 &&
            [...host.owner!.book.outboxes.values()].every((o) => o.entries.length === 0) &&
            [...host.owner!.book.holds.values()].every((hold) => hold.pendingFor === undefined),
        );
      if (isQuiet) return;
      nowMs += LIMITS.lockQueryMs;
      for (const host of owners) route(host.index, host.take(host.owner!.tick(nowMs)));
    }
    const stuck = owners.flatMap((host) => [
      ...(host.owner!.inFlightCount > 0 ? [`owner ${host.index}: ${host.owner!.inFlightCount} fills in flight`] : []),
      ...[...host.owner!.book.outboxes].flatMap(([peer, o]) =>
        o.entries.length > 0
          ? [
              `owner ${host.index}: ${o.entries.length} unacknowledged to ${peer} from ${o.entries[0]!.seq} (${JSON.stringify(o.entries[0]!.command, (_k, v) => (typeof v === 'bigint' ? String(v) : v))})`,
            ]
          : [],
      ),
      ...[...host.owner!.book.holds].flatMap(([ref, hold]) =>
        hold.pendingFor !== undefined ? [`owner ${host.index}: lock ${ref} pending`] : [],
      ),
      ...[...host.owner!.book.received].map(([peer, seq]) => `owner ${host.index} received from ${peer} up to ${seq}`),
    ]);
    failures.push(`did not quiesce in 200 rounds: ${stuck.join('; ')}`);
  };
  heal();
  // Every contest ends: open ones are resolved; each is driven until closed, healing between steps.
  for (let round = 0; round < 50 && contests.some((c) => c.phase !== 'closed'); round++) {
    for (const contest of contests) {
      if (contest.phase === 'open') contest.phase = 'settling';
      progress(contest);
    }
    heal();
  }
  for (const contest of contests) if (contest.phase !== 'closed') failures.push(`contest ${contest.id} never closed (${contest.phase})`);
  for (const rfq of [...active.values()]) endRfq(rfq);
  for (const host of owners) {
    for (const [ref, hold] of [...host.owner!.book.holds]) {
      if (ref.startsWith('rfq:') && hold.bucket === 'reserved') call(host.index, { op: 'release', ref }, { kind: 'other' });
      if (ref.startsWith('rfq:') && hold.bucket === 'at_risk') {
        const { makerAddress } = makerOfFill.get(ref)!;
        call(host.index, { op: 'settle', ref, makerAddress, outcome: pick(['won', 'lost', 'voided'] as const) }, { kind: 'settle', ref });
      }
      // An entry whose answer was lost in a crash: its lane never counted it, so it is refunded.
      if (ref.startsWith('contest:') && hold.bucket === 'reserved') call(host.index, { op: 'release', ref }, { kind: 'other' });
      if (hold.bucket === 'pending_withdrawal')
        call(host.index, { op: 'finish_withdrawal', ref, isCompleted: rng() < 0.5 }, { kind: 'other' });
    }
  }
  heal();

  // The checks.
  const journals = owners.map((host) => ({ book: host.owner!.book, records: host.journal() }));
  const check = checkOwners(journals);
  failures.push(...check.differences);
  if (check.inTransitMicros !== 0n) failures.push(`${check.inTransitMicros} still in transit after healing`);
  const transferIds = new Set(
    journals.flatMap(({ records }) => records.flat().flatMap((e) => (e.t === 'transfer' ? [e.transfer.id] : []))),
  );
  for (const [key, credit] of acked.credits) {
    const used = owners[ownerOf(creditRef(key))]!.owner!.book.creditKeys.get(key);
    if (used === undefined || used.amountMicros !== credit.amountMicros) failures.push(`acknowledged credit ${key} lost`);
  }
  for (const ref of acked.reservations) if (!transferIds.has(`${ref}/reserve`)) failures.push(`acknowledged reservation ${ref} lost`);
  for (const ref of acked.fills) if (!transferIds.has(`${ref}/fill`)) failures.push(`acknowledged fill ${ref} lost`);
  for (const ref of acked.settlements) if (!transferIds.has(`${ref}/settle_stake`)) failures.push(`acknowledged settlement ${ref} lost`);
  for (const ref of acked.withdrawals) if (!transferIds.has(`${ref}/request`)) failures.push(`acknowledged withdrawal ${ref} lost`);
  for (const ref of acked.prizes)
    if (!transferIds.has(`${ref}/prize`) && !isZeroPrize(contests, ref)) failures.push(`acknowledged prize ${ref} lost`);
  // Every reservation ended once (released, or filled and settled); every committed fill's liability was
  // locked, posted and settled, never voided under it.
  for (const ref of transferIds) {
    const [rfqRef, step] = ref.split('/') as [string, string];
    const isEnded = ['release', 'fill', 'collect'].some((end) => transferIds.has(`${rfqRef}/${end}`));
    if (step === 'reserve' && !isEnded) failures.push(`${rfqRef} never ended`);
    if (step === 'fill') {
      const liability = makerOfFill.get(rfqRef)?.liabilityMicros ?? 0n;
      if (!transferIds.has(`${rfqRef}/settle_stake`)) failures.push(`position ${rfqRef} never settled`);
      if (liability > 0n && !transferIds.has(`${rfqRef}/settle_liability`))
        failures.push(`position ${rfqRef}: its liability was never settled`);
    }
  }
  for (const host of owners) {
    for (const [ref, hold] of host.owner!.book.holds) failures.push(`owner ${host.index} still holds ${hold.amountMicros} for ${ref}`);
  }
  return {
    seed: options.seed,
    crashes,
    acked: {
      credits: acked.credits.size,
      reservations: acked.reservations.size,
      fills: acked.fills.size,
      remoteFills,
      settlements: acked.settlements.size,
      withdrawals: acked.withdrawals.size,
      contests: contests.filter((c) => c.entries.length > 0).length,
      entries: contests.reduce((sum, c) => sum + c.entries.length, 0),
      prizes: acked.prizes.size,
    },
    fillRefusals: Object.fromEntries(refusals),
    check,
    failures,
    repeated,
  };
}

/** A prize of 0 moves nothing (no transfer), but is recorded as paid. */
function isZeroPrize(contests: readonly Contest[], ref: string): boolean {
  return contests.some((contest) => contest.prizes?.some((prize) => prize.ref === ref && prize.amountMicros === 0n) === true);
}
