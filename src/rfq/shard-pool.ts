// Main thread. Starts the RFQ shard workers and is the main thread's only door to them: calls (create,
// status, cancel) with a bounded number outstanding per shard, maker messages routed by the shard named in
// the request id, broadcasts of new RFQs through the maker gateway, and the waiters behind `wait_ms`.
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { ApiError, overloaded } from '../errors.js';
import type { RfqResult } from '../schemas/rfq.js';
import type { RfqMessage, ServerToMakerMessage } from '../schemas/mm.js';
import { Batcher } from '../batcher.js';
import { setBounded } from '../bounded-map.js';
import { newRequestId, shardOfRequest, shardOfUser } from './ids.js';
import { rfqTimes, toRfqMessage, type Announced } from './announcement.js';
import { InFlightCreates } from './in-flight-creates.js';
import { SHUTDOWN, type CallOutcome, type CreateRfq, type CreatedRfq, type MainToShard, type ShardInit, type ShardToMain } from './messages.js';
import type { RfqMetrics } from './metrics.js';

/** What the pool needs of the maker gateway (src/mm/gateway.ts). */
export interface MakerFanout {
  broadcast(message: ServerToMakerMessage): number;
  connectedMakerIds(): string[];
  send(makerId: string, message: ServerToMakerMessage): boolean;
  /** Several frames (JSON text) to one connection, in order, written together (one system call). */
  sendFrames(makerId: string, frames: readonly string[]): boolean;
}

/** What the pool reads of committed state (LMDB, through the ledger) to decide whether to announce an RFQ. */
export interface CommittedState {
  availableMicros(userId: string): bigint;
  isKnownReplayKey(replayKey: string): boolean;
  /**
   * Moves this thread's read snapshot to the latest commit. lmdb-js renews it only every ~1 ms, so without
   * this a read just after a shard's commit (a balance right after `completed`) could miss it.
   */
  refresh(): void;
}

/** Bound on calls waiting for one shard; past it, new RFQs get 503 OVERLOADED (nothing accepted). */
const MAX_OUTSTANDING_CALLS_PER_SHARD = 20_000;
/** How long a stopping shard may take to finish its commit in progress before it is ended. */
const SHARD_STOP_GRACE_MS = 5_000;
/** Terminal results kept for a waiter that registers just after them (see unclaimedTerminals). */
const MAX_UNCLAIMED_TERMINALS = 16_384;

/** A create as admission made it; the pool adds the call's own fields. */
type NewRfq = Omit<CreateRfq, 'kind' | 'callId' | 'answerWaitMs' | 'announced'>;

interface ShardHandle {
  shard: number;
  worker: Worker;
  out: Batcher<MainToShard>;
  calls: Map<number, (outcome: CallOutcome<unknown>) => void>;
  activeRfqs: number;
}

export class ShardPool {
  private readonly shards: ShardHandle[] = [];
  private readonly waiters = new Map<string, Set<(result: RfqResult) => void>>();
  /**
   * Terminal results that a create's answer will wait for but that came first, oldest first. An RFQ's created
   * and terminal events can reach this thread back to back (makers answer while the create commits, or the
   * two writes share one commit: shard.ts commitCreate), before the submitting request has registered its
   * waiter (a promise turn after 'created'). Only those: the result of an RFQ whose create did not ask to
   * wait is never claimed (a poller reads it from LMDB), and keeping it would only fill this map.
   */
  private readonly unclaimedTerminals = new Map<string, RfqResult>();
  /** Maker frames of this turn, grouped by connection as they come (see queueFrame; not a Batcher: keyed). */
  private framesByMaker = new Map<string, string[]>();
  private isFrameFlushScheduled = false;
  private readonly inFlight = new InFlightCreates();
  private nextCallId = 1;
  private isClosing = false;

  constructor(
    private readonly init: Omit<ShardInit, 'shard' | 'shardCount'> & { shardCount: number },
    private readonly makers: MakerFanout,
    private readonly committed: CommittedState,
    private readonly metrics: RfqMetrics,
    private readonly log: Logger,
  ) {
    for (let shard = 0; shard < init.shardCount; shard++) this.shards.push(this.spawn(shard));
  }

  get shardCount(): number {
    return this.shards.length;
  }

  shardOfUser(userId: string): number {
    return shardOfUser(userId, this.shards.length);
  }

  /**
   * `answerWaitMs`: how long the taker's answer may wait for the terminal result (see CreateRfq).
   *
   * When committed state and the creates still on their way say the shard will accept it as a new RFQ, the
   * makers hear of it now, while the create travels to its shard: their round trip overlaps that hop and
   * whatever the shard is busy with (a commit) instead of following them (docs/rfq.md). Otherwise the shard
   * decides first and announces it itself. Should the shard still refuse an announced RFQ (a contest entry
   * spent the balance in between, the shard is at its active limit), it never existed: makers' quotes for
   * it get RFQ_CLOSED, as for a create refused at its commit.
   */
  async create(command: NewRfq, answerWaitMs: number): Promise<CreatedRfq> {
    const shard = this.shardOfUser(command.userId);
    // Refused before anything is announced (call() would refuse it only after).
    if (this.isAtCallLimit(shard)) throw overloaded();
    const wagerMicros = BigInt(command.wagerMicros);
    const announced = this.isSureNew(command, wagerMicros) ? this.announce(shard, command) : null;
    const release = this.inFlight.add(command.userId, command.replayKey, wagerMicros);
    try {
      const created = await this.call<CreatedRfq>(shard, (callId) => ({ kind: 'create', callId, ...command, answerWaitMs, announced }));
      this.metrics.persistSeconds.observe(created.persistUs / 1e6);
      return created;
    } finally {
      release(); // its commit counts from here on: onEvent read a fresh snapshot when the answer came
    }
  }

  status(requestId: string, userId: string): Promise<RfqResult> {
    const shard = shardOfRequest(requestId, this.shards.length);
    if (shard === null) return Promise.reject(new ApiError('RFQ_NOT_FOUND'));
    return this.call<RfqResult>(shard, (callId) => ({ kind: 'status', callId, requestId, userId }));
  }

  cancel(requestId: string, userId: string): Promise<RfqResult> {
    const shard = shardOfRequest(requestId, this.shards.length);
    if (shard === null) return Promise.reject(new ApiError('RFQ_NOT_FOUND'));
    return this.call<RfqResult>(shard, (callId) => ({ kind: 'cancel', callId, requestId, userId }));
  }

  /**
   * Resolves with the terminal result, or null after `waitMs` or when the client goes away. `abortSignal` is
   * read only when the answer has to wait: making the request's AbortController was ~0.3 % of the main
   * thread's samples at 2,000 RFQ/s, and most answers find their result here already.
   */
  waitForTerminal(requestId: string, waitMs: number, abortSignal: () => AbortSignal): Promise<RfqResult | null> {
    const ended = this.unclaimedTerminals.get(requestId);
    if (ended !== undefined) {
      this.unclaimedTerminals.delete(requestId);
      return Promise.resolve(ended);
    }
    const signal = abortSignal();
    return new Promise((resolve) => {
      const set = this.waiters.get(requestId) ?? new Set();
      this.waiters.set(requestId, set);
      const done = (result: RfqResult | null) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        set.delete(wake);
        if (set.size === 0 && this.waiters.get(requestId) === set) this.waiters.delete(requestId);
        resolve(result);
      };
      const wake = (result: RfqResult) => done(result);
      const onAbort = () => done(null);
      const timer = setTimeout(() => done(null), waitMs);
      signal.addEventListener('abort', onAbort);
      set.add(wake);
    });
  }

  /** Routes a maker message to the shard named in its request id; false when it names no shard. */
  toShard(requestId: string, message: MainToShard): boolean {
    const shard = shardOfRequest(requestId, this.shards.length);
    if (shard === null) return false;
    this.shards[shard]!.out.add(message);
    return true;
  }

  /** A maker connection closed: every shard withdraws its quotes. */
  makerDisconnected(makerId: string): void {
    for (const handle of this.shards) handle.out.add({ kind: 'maker_disconnected', makerId });
  }

  get activeRfqs(): number {
    return this.shards.reduce((sum, s) => sum + s.activeRfqs, 0);
  }

  /** A create with this replay key has left for its shard and is not answered yet. */
  isReplayKeyInFlight(replayKey: string): boolean {
    return this.inFlight.hasKey(replayKey);
  }

  /** Terminal results waiting for their create's answer to claim them (a gauge: 0 between requests). */
  get unclaimedResults(): number {
    return this.unclaimedTerminals.size;
  }

  get outstandingCalls(): number {
    return this.shards.reduce((sum, s) => sum + s.calls.size, 0);
  }

  async close(): Promise<void> {
    this.isClosing = true;
    await Promise.all(this.shards.map((handle) => this.stop(handle)));
  }

  /** Committed state and the creates on their way say the shard will accept it: no replay, not expired, funded. */
  private isSureNew(command: NewRfq, wagerMicros: bigint): boolean {
    if (this.inFlight.hasKey(command.replayKey) || this.committed.isKnownReplayKey(command.replayKey)) return false;
    if (command.rfqKind === 'signed' && command.expiresAtMs <= Date.now()) return false;
    return this.committed.availableMicros(command.userId) - this.inFlight.wagerOf(command.userId) >= wagerMicros;
  }

  /** Sends the `rfq` to every connected maker under an id of the taker's shard; the create carries it there. */
  private announce(shard: number, command: NewRfq): Announced {
    const nowMs = Date.now();
    const requestId = newRequestId(shard, nowMs);
    const times = rfqTimes(command, nowMs, this.init);
    return { requestId, ...times, makerIds: this.broadcast(toRfqMessage(requestId, command, times)) };
  }

  /** An RFQ its shard announced: the shard learns its audience from the next batch. */
  private fanOut(shard: number, message: RfqMessage): void {
    const makerIds = this.broadcast(message);
    this.shards[shard]!.out.add({ kind: 'audience', requestId: message.request_id, makerIds });
  }

  /** Returns the connections the RFQ went to. */
  private broadcast(message: RfqMessage): string[] {
    const startNs = process.hrtime.bigint();
    this.makers.broadcast(message);
    // Same synchronous run as the publish: exactly the connections that were sent the RFQ.
    const makerIds = this.makers.connectedMakerIds();
    this.metrics.fanoutSeconds.observe(Number(process.hrtime.bigint() - startNs) / 1e9);
    return makerIds;
  }

  /**
   * Frames for makers wait for the end of this event-loop turn (setImmediate: after its I/O), gathered per
   * connection, and go out corked: one turn holds the acks and results of many RFQs and of every shard, and
   * a write per frame was the main thread's largest cost (docs/performance.md). Order per connection is
   * kept. An RFQ's own broadcast always went out before any frame about it: those answer the makers'
   * messages about that RFQ.
   */
  private queueFrame(makerId: string, frame: string): void {
    const frames = this.framesByMaker.get(makerId);
    if (frames === undefined) this.framesByMaker.set(makerId, [frame]);
    else frames.push(frame);
    if (this.isFrameFlushScheduled) return;
    this.isFrameFlushScheduled = true;
    setImmediate(this.flushFrames);
  }

  private readonly flushFrames = (): void => {
    const framesByMaker = this.framesByMaker;
    this.framesByMaker = new Map();
    this.isFrameFlushScheduled = false;
    for (const [makerId, frames] of framesByMaker) this.makers.sendFrames(makerId, frames);
  };

  private isAtCallLimit(shard: number): boolean {
    return this.shards[shard]!.calls.size >= MAX_OUTSTANDING_CALLS_PER_SHARD;
  }

  /**
   * `message` builds the call's message around its id. (Not `{ ...command, callId }`: V8 keeps an object made
   * by a leading spread and then given more properties alive until a full collection, docs/performance.md.)
   */
  private call<T>(shard: number, message: (callId: number) => MainToShard): Promise<T> {
    if (this.isAtCallLimit(shard)) return Promise.reject(overloaded());
    const handle = this.shards[shard]!;
    const callId = this.nextCallId++;
    return new Promise<T>((resolve, reject) => {
      handle.calls.set(callId, (outcome) => {
        if (outcome.ok) resolve(outcome.value as T);
        // OVERLOADED (the shard's active-RFQ limit) carries Retry-After, as every 503 does (contract section 2).
        else reject(outcome.code === 'OVERLOADED' ? overloaded() : new ApiError(outcome.code, outcome.message));
      });
      handle.out.add(message(callId));
    });
  }

  /** Asks a shard to stop after its commit in progress (shard-worker.ts); ends it if it has not in time. */
  private stop(handle: ShardHandle): Promise<void> {
    if (handle.worker.threadId === -1) return Promise.resolve(); // already exited
    return new Promise((resolve) => {
      const timer = setTimeout(() => void handle.worker.terminate(), SHARD_STOP_GRACE_MS);
      handle.worker.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      handle.worker.postMessage(SHUTDOWN);
    });
  }

  private spawn(shard: number): ShardHandle {
    const init: ShardInit = { shard, ...this.init };
    const worker = new Worker(new URL('./shard-worker.js', import.meta.url), { workerData: init });
    const handle: ShardHandle = {
      shard,
      worker,
      // Per turn: quotes from many maker sockets, read in one turn, reach the shard as one message.
      out: new Batcher((batch) => worker.postMessage(batch), 'turn'),
      calls: new Map(),
      activeRfqs: 0,
    };
    worker.on('message', (batch: ShardToMain[]) => {
      for (const event of batch) this.onEvent(handle, event);
    });
    worker.on('error', (err) => {
      // A shard only throws on a broken invariant: its in-memory state can no longer be trusted, and RFQs it
      // held are still reserved in LMDB. Stop the process; the next start fails and releases them.
      this.log.fatal({ err, shard }, 'RFQ shard crashed; stopping the service');
      process.exit(70);
    });
    worker.on('exit', (code) => {
      if (!this.isClosing) {
        this.log.fatal({ shard, code }, 'RFQ shard exited; stopping the service');
        process.exit(70);
      }
    });
    return handle;
  }

  private onEvent(handle: ShardHandle, event: ShardToMain): void {
    // A create's answer and a terminal result each follow a commit of the shard: reads on this thread from
    // now on (the pool's next announcement check, a taker's balance) must see it.
    if (event.kind === 'created' || event.kind === 'terminal') this.committed.refresh();
    switch (event.kind) {
      case 'created':
      case 'status':
      case 'cancelled': {
        const settle = handle.calls.get(event.callId);
        handle.calls.delete(event.callId);
        settle?.(event.outcome);
        return;
      }
      case 'broadcast':
        this.fanOut(handle.shard, event.message);
        return;
      case 'to_maker':
        return this.queueFrame(event.makerId, event.frame);
      case 'terminal': {
        this.metrics.terminalTotal.inc({ status: event.result.status, error: event.result.error ?? '' });
        this.metrics.selectionSeconds.observe(event.selectionUs / 1e6);
        this.metrics.persistSeconds.observe(event.persistUs / 1e6);
        // Wall clock, as created_at is (the announcing thread's Date.now()): whole milliseconds at both ends.
        this.metrics.endToEndSeconds.observe(Math.max(0, Date.now() - event.createdAtMs) / 1000);
        const set = this.waiters.get(event.result.request_id);
        if (set !== undefined) for (const wake of [...set]) wake(event.result);
        // Claimed a promise turn later. Bounded all the same: a claim that never comes must not grow it.
        else if (event.isAwaitedByCreate) {
          setBounded(this.unclaimedTerminals, event.result.request_id, event.result, MAX_UNCLAIMED_TERMINALS);
        }
        return;
      }
      case 'stats':
        handle.activeRfqs = event.activeRfqs;
        return;
      default: {
        const unknown: never = event;
        throw new Error(`unknown shard event ${JSON.stringify(unknown)}`);
      }
    }
  }
}
