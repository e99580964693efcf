// Main thread. The main thread's only door to the RFQ shards, through one transport each (shard-transport.ts):
// calls (create, status, cancel, money movements) with a bounded number outstanding per shard, maker
// messages routed by the shard named in the request id, the fan-out of each RFQ a shard accepted to the
// makers, and the waiters behind `wait_ms`. It decides nothing about an RFQ or a balance: the shard does.
import type { Logger } from 'pino';
import { ApiError, errors, overloaded } from '../lib/errors.js';
import type { RfqResult } from '../contract/rfq.js';
import type { StoredMarket } from '../contract/markets.js';
import type { RfqMessage, ServerToMakerMessage } from '../contract/mm.js';
import type { MakerFact } from './maker-facts.js';
import { Batcher } from '../lib/batcher.js';
import { shardOfRequest, shardOfUser } from './ids.js';
import type { WithdrawnQuote } from './active-rfq.js';
import { packDeclines } from './pack-declines.js';
import type { CallOutcome, CreateRfq, CreatedRfq, MainToShard, ShardInit, ShardToMain, ToMakerEvent } from './messages.js';
import type { ChannelPoint, MoneyOp, MoneyResult } from '../ledger/money-ops.js';
import type { RfqMetrics } from './metrics.js';
import { TerminalWaiters } from './terminal-waiters.js';
import { workerTransport, type ShardTransport, type ShardTransportFactory } from './shard-transport.js';
import type { Effect } from '../engine/effects.js';
import type { MoneyAnswer, MoneyCall } from '../ledger/money-ops.js';
import { peerPorts } from '../engine/peer-links.js';
import { ownerOfName } from '../engine/routing.js';
import { creditRef, PROTOCOL, type AccountId } from '../records/ledger.js';
import type { BlindWrite } from '../store/records.js';
import { crashLater } from '../lib/fatal.js';

/** What the pool needs of the maker gateway (src/mm/gateway.ts). */
export interface MakerFanout {
  broadcast(message: ServerToMakerMessage): number;
  connectedMakerIds(): string[];
  /** Whether any maker is connected (a cluster's shard door awaits the audiences only of gateways with one). */
  hasConnectedMakers(): boolean;
  send(makerId: string, message: ServerToMakerMessage): boolean;
  /**
   * Several frames (JSON text) to one connection, in order, written together (one system call), with the
   * facts those frames carry (rfq/maker-facts.ts), in the same order, for the desk's book and stats. `unreplayed`:
   * the indexes, ascending, of frames a resume must not replay (a last look: the drop ended it as a reject).
   */
  sendFrames(makerId: string, frames: readonly string[], facts: readonly MakerFact[], unreplayed: readonly number[] | null): boolean;
}

/** The pool's makers before start: unreachable (no shard exists to send a frame), so any use is a wiring bug. */
const notStarted = (): never => {
  throw new Error('the shard pool is not started'); // a wiring bug
};
const NOT_STARTED: MakerFanout = {
  broadcast: notStarted,
  connectedMakerIds: notStarted,
  hasConnectedMakers: notStarted,
  send: notStarted,
  sendFrames: notStarted,
};

/** Bound on calls waiting for one shard; past it, new work gets 503 OVERLOADED (nothing accepted). */
const MAX_OUTSTANDING_CALLS_PER_SHARD = 20_000;
/** Events sent after a commit of the shard: what the main thread reads next must see it. */
const followsCommit = (event: ShardToMain) =>
  event.kind === 'created' || event.kind === 'terminal' || event.kind === 'money' || event.kind === 'ready' || event.kind === 'barrier';

/** One connection's frames of this turn, and the events among them that carry a fact (most carry none: null until one does). */
interface PendingFrames {
  frames: string[];
  facts: MakerFact[] | null;
  /** Indexes into `frames` of those a resume must not replay (MakerFanout.sendFrames). */
  unreplayed: number[] | null;
}
const NO_FACTS: readonly MakerFact[] = [];
/** The outcome of every call outstanding on a shard its transport can no longer reach. */
const UNREACHABLE: CallOutcome<never> = { ok: false, code: 'OVERLOADED' };

/** A create as admission made it; the pool adds the call's own fields. */
export type NewRfq = Omit<CreateRfq, 'kind' | 'callId' | 'answerWaitMs'>;

interface ShardHandle {
  shard: number;
  transport: ShardTransport;
  out: Batcher<MainToShard>;
  calls: Map<number, (outcome: CallOutcome<unknown>) => void>;
  activeRfqs: number;
  /** False while its transport says the shard cannot be reached (a cluster's node gone): calls are refused at once. */
  isReachable: boolean;
}

/**
 * Which shards there are and who owns what: in one process, shards 0..n-1 placed by the hash of a name
 * modulo n (engine/routing.ts); in a cluster, the partition map's owners (cluster/partitions.ts).
 */
export interface ShardPlacement {
  /** Every shard's number, in the order the pool starts them. */
  shards: readonly number[];
  shardOfUser(userId: string): number;
  /** The shard named in a request id, or null when it names none. */
  shardOfRequest(requestId: string): number | null;
  ownerOf(account: AccountId): number;
}

/** One process's shards: 0..shardCount-1, each a name's hash modulo the count. */
export function hashPlacement(shardCount: number): ShardPlacement {
  const ownerOf = ownerOfName(shardCount);
  return {
    shards: Array.from({ length: shardCount }, (_, shard) => shard),
    shardOfUser: (userId) => shardOfUser(userId, shardCount),
    shardOfRequest: (requestId) => shardOfRequest(requestId, shardCount),
    ownerOf,
  };
}

export interface ShardPoolOptions {
  /**
   * Requests held open by `wait_ms` at once, service-wide (each a timer, a closure and an open socket); past
   * it a request that asks to wait gets 503 OVERLOADED before anything is created (PARLAYD_MAX_WAITERS).
   */
  maxWaiters?: number;
  /** The shard's transport (a worker thread unless a test runs the shards in process). */
  transport?: ShardTransportFactory;
  /** Which shards there are (hashPlacement of `shardCount` unless given: a cluster's partition map). */
  placement?: ShardPlacement;
  /**
   * The shards run in other processes with stores of their own (a cluster's shard nodes): this process's LMDB
   * holds none of their records, and they settle their own positions as resolved markets reach them.
   */
  areShardsRemote?: boolean;
  /** Every market, as stored: what a shard that keeps its own copy is given when it joins (ShardEvents.allMarkets). */
  allMarkets?: () => Iterable<StoredMarket>;
  /**
   * Renews this thread's read snapshot of the store. lmdb-js renews it by itself only every ~1 ms, so without
   * this a read right after a shard's answer (a balance after `completed`, the contest record after an entry)
   * could miss the commit the answer follows. Called once per batch of events that holds such an answer.
   */
  refreshReads?: () => void;
  /** The journal engine's first start on a directory of today's layout: each owner's first record (engine/first-start.ts). */
  firstRecords?: Effect[][];
  /** Every shard is ready and what it decided at start is durable (the journal engine's first records). */
  onDurablyReady?: () => void;
  /**
   * A shard failed (a broken invariant, or a store it cannot write): its in-memory state is lost, so the
   * service must stop, and the next start's shards end what it held. main.ts exits the process (code 70).
   * Without it the failure is thrown on a fresh stack, and the uncaught exception stops the process too.
   */
  onShardFailed?: () => void;
}

export class ShardPool {
  private readonly shards: ShardHandle[] = [];
  /** `shards` by shard number (the numbers are a cluster's owners, not 0..n-1). */
  private readonly byShard = new Map<number, ShardHandle>();
  /** Maker frames of this turn, grouped by connection as they come (see queueFrame; not a Batcher: keyed). */
  private framesByMaker = new Map<string, PendingFrames>();
  private isFrameFlushScheduled = false;
  private nextCallId = 1;
  /** Set by start: where the shards' frames for makers go. Until then no shard exists to send one. */
  private makers: MakerFanout = NOT_STARTED;
  /** Makers' announcements to the remote shards' doors not yet answered by all (announceMakers). */
  #announcing = 0;
  /** Set by start, once. */
  private whenReady: Promise<number> | null = null;
  private readonly waiters: TerminalWaiters;
  private readonly placement: ShardPlacement;

  constructor(
    private readonly init: Omit<ShardInit, 'shard'>,
    private readonly metrics: RfqMetrics,
    private readonly log: Logger,
    private readonly options: ShardPoolOptions = {},
  ) {
    this.waiters = new TerminalWaiters(options.maxWaiters);
    this.placement = options.placement ?? hashPlacement(init.shardCount);
  }

  /**
   * Spawns the shards. Resolves once every shard has run its recovery, with the number of RFQs that were
   * active at the last stop and ended failed SERVICE_RESTARTED; calls made before wait in the shards' queues.
   * `makers` is where their frames for makers go: the desk, which is built after the pool because it hands
   * makers' messages to it. The one cycle among the service's parts (shards -> desk -> shards) closes here,
   * once, before any shard exists.
   */
  start(makers: MakerFanout): Promise<number> {
    if (this.whenReady !== null) throw new Error('ShardPool.start called twice'); // a wiring bug
    this.makers = makers;
    const { init, options } = this;
    // The journal engine's owners talk to each other directly, one port per pair (engine/peer-links.ts).
    // Remote shards' owners are linked over the network by their nodes (cluster/nats-links.ts).
    const ports = init.engine === 'journal' && !this.areShardsRemote ? peerPorts(init.shardCount) : null;
    const ready: Promise<number>[] = [];
    for (const shard of this.placement.shards) {
      const firstRecord = options.firstRecords?.[shard];
      const { handle, whenReady } = this.spawn({
        shard,
        ...init,
        ...(ports === null ? {} : { peerPorts: ports[shard]! }),
        ...(firstRecord === undefined ? {} : { firstRecord }),
      });
      this.shards.push(handle);
      this.byShard.set(shard, handle);
      ready.push(whenReady);
    }
    this.whenReady = Promise.all(ready).then(async (counts) => {
      if (options.onDurablyReady !== undefined) {
        await this.readBarrier();
        options.onDurablyReady();
      }
      return counts.reduce((sum, n) => sum + n, 0);
    });
    return this.whenReady;
  }

  get shardCount(): number {
    return this.placement.shards.length;
  }

  shardOfUser(userId: string): number {
    return this.placement.shardOfUser(userId);
  }

  /** Every shard's number (a cluster's owners), in the order they started. */
  shardNumbers(): readonly number[] {
    return this.placement.shards;
  }

  /** ShardPoolOptions.areShardsRemote. */
  get areShardsRemote(): boolean {
    return this.options.areShardsRemote === true;
  }

  get engine(): ShardInit['engine'] {
    return this.init.engine;
  }

  /**
   * Where a credit under `idempotencyKey` is decided. The journal engine: its key's owner (a key is unique
   * across accounts, so one owner decides its replays; the money travels to the account's owner if that is
   * another). The lmdb engine: the user's shard (LMDB's writer lock orders the key's readers).
   */
  shardOfCredit(idempotencyKey: string, userId: string): number {
    return this.init.engine === 'journal' ? this.placement.ownerOf(creditRef(idempotencyKey)) : this.shardOfUser(userId);
  }

  /** The journal engine: the owner of an account (users' on their RFQs' shard, the protocol's on shard 0). */
  shardOfAccount(account: AccountId): number {
    return this.placement.ownerOf(account);
  }

  /**
   * Where a contest entry's settlement is decided: a refund by the entrant's owner (its stake is held there);
   * a prize, on the journal engine, by the protocol's owner (it leaves the pool held there).
   */
  shardOfEntrySettlement(userId: string, isPrize: boolean): number {
    return isPrize && this.init.engine === 'journal' ? this.placement.ownerOf(PROTOCOL) : this.shardOfUser(userId);
  }

  /** One call of the journal engine's money protocol on `shard`, with the records that go with it. */
  async ownerCall(shard: number, call: MoneyCall, facts: BlindWrite[] = []): Promise<MoneyAnswer> {
    const result = await this.moveMoney<Extract<MoneyResult, { op: 'owner_call' }>>(shard, { op: 'owner_call', call, facts });
    return result.answer;
  }

  /**
   * Resolves once LMDB shows everything every shard decided before the call: what a view of money or RFQs
   * awaits to show a caller its own writes on the journal engine (its read model is written behind). At once
   * on the lmdb engine, whose shards answer after their commits.
   */
  async readBarrier(): Promise<void> {
    // Remote shards' views are read at their nodes, after each node's own barrier (readRemoteView).
    if (this.init.engine !== 'journal' || this.areShardsRemote) return;
    await this.#barriers();
  }

  /**
   * readBarrier, and then every shard's barrier after what the others had sent it on their channels by then:
   * LMDB shows both halves of every movement between shards decided before the call. What the ledger check
   * awaits before it checks again a difference that money on its way between shards can explain.
   */
  async settledBarrier(): Promise<void> {
    if (this.init.engine !== 'journal') return;
    const sent = await this.#barriers();
    await Promise.all(sent.map((point) => this.#barrier(point.owner, point)));
  }

  /** Every shard's barrier; what each had sent on its channels by then. */
  async #barriers(): Promise<ChannelPoint[]> {
    const sent = await Promise.all(this.shards.map((handle) => this.#barrier(handle.shard)));
    return sent.flat();
  }

  /** A view of what remote shard `shard` owns (ShardTransport.readView), read at its node. */
  readRemoteView(shard: number, name: string, args: unknown): Promise<unknown> {
    const { transport } = this.#handle(shard);
    if (transport.readView === undefined) throw new Error(`shard ${shard} is not remote`); // a wiring bug
    return transport.readView(name, args);
  }

  /** `shard`'s barrier (messages.ts MainToShard `barrier`), after `after` when given. */
  #barrier(shard: number, after?: ChannelPoint): Promise<ChannelPoint[]> {
    return this.call<ChannelPoint[]>(shard, (callId) =>
      after === undefined ? { kind: 'barrier', callId } : { kind: 'barrier', callId, after },
    );
  }

  /** `answerWaitMs`: how long the taker's answer may wait for the terminal result (see CreateRfq). */
  async create(command: NewRfq, answerWaitMs: number): Promise<CreatedRfq> {
    const shard = this.shardOfUser(command.userId);
    const created = await this.call<CreatedRfq>(shard, (callId) => ({ kind: 'create', callId, ...command, answerWaitMs }));
    this.metrics.persistSeconds.observe(created.persistUs / 1e6);
    return created;
  }

  /**
   * A movement of users' money, decided and written by the shard that owns them (messages.ts MoneyOp): every
   * user the op names must belong to `shard` (shardOfUser), which the shard's ledger asserts.
   */
  async moveMoney<R extends MoneyResult>(shard: number, op: MoneyOp): Promise<R> {
    const result = await this.call<R>(shard, (callId) => ({ kind: 'money', callId, op }));
    // Money that went on to an account of another shard: answered once that shard shows it. A shard this
    // pool does not know of (a cluster gateway whose map is not the nodes') cannot be asked: the money is
    // decided and on its way, so the answer stands without the wait.
    const transit = 'transit' in result ? result.transit : undefined;
    if (transit !== undefined && this.byShard.has(transit.owner)) await this.#barrier(transit.owner, transit);
    return result;
  }

  /** A place for a request that will wait (wait_ms): TerminalWaiters.reserve. */
  reserveWaiter(): () => void {
    return this.waiters.reserve();
  }

  /** Waiting requests and reserved places (a gauge). */
  get waiterCount(): number {
    return this.waiters.count;
  }

  status(requestId: string, userId: string): Promise<RfqResult> {
    const shard = this.placement.shardOfRequest(requestId);
    if (shard === null) return Promise.reject(new ApiError('RFQ_NOT_FOUND'));
    return this.call<RfqResult>(shard, (callId) => ({ kind: 'status', callId, requestId, userId }));
  }

  cancel(requestId: string, userId: string): Promise<RfqResult> {
    const shard = this.placement.shardOfRequest(requestId);
    if (shard === null) return Promise.reject(new ApiError('RFQ_NOT_FOUND'));
    return this.call<RfqResult>(shard, (callId) => ({ kind: 'cancel', callId, requestId, userId }));
  }

  /** The terminal result, or null after `waitMs` or when the client goes away: TerminalWaiters.wait. */
  waitForTerminal(requestId: string, waitMs: number, abortSignal: () => AbortSignal): Promise<RfqResult | null> {
    return this.waiters.wait(requestId, waitMs, abortSignal);
  }

  /** Routes a maker message to the shard named in its request id; false when it names no shard. */
  toShard(requestId: string, message: MainToShard): boolean {
    const shard = this.placement.shardOfRequest(requestId);
    if (shard === null) return false;
    this.#handle(shard).out.add(message);
    return true;
  }

  /** Every shard withdraws the standing quotes of these connections; resolves with what they withdrew. */
  async withdrawQuotes(makerIds: string[]): Promise<WithdrawnQuote[]> {
    const perShard = await Promise.all(
      this.shards.map((handle) => this.call<WithdrawnQuote[]>(handle.shard, (callId) => ({ kind: 'withdraw_quotes', callId, makerIds }))),
    );
    return perShard.flat();
  }

  /**
   * A market as just written (created, or resolved): to every shard that keeps its own copy (a cluster's nodes),
   * ahead of what is sent them after it, such as the settlement of its positions.
   */
  publishMarket(market: StoredMarket): void {
    for (const handle of this.shards) handle.transport.sendMarkets?.([market]);
  }

  /** A maker connection closed: every shard withdraws its quotes. */
  makerDisconnected(makerId: string): void {
    for (const handle of this.shards) handle.out.add({ kind: 'maker_disconnected', makerId });
  }

  get activeRfqs(): number {
    return this.shards.reduce((sum, s) => sum + s.activeRfqs, 0);
  }

  /** Terminal results waiting for their create's answer to claim them (a gauge: 0 between requests). */
  get unclaimedResults(): number {
    return this.waiters.unclaimedCount;
  }

  get outstandingCalls(): number {
    return this.shards.reduce((sum, s) => sum + s.calls.size, 0);
  }

  /** outstandingCalls per shard, by shard number. */
  outstandingCallsByShard(): number[] {
    return this.shards.map((s) => s.calls.size);
  }

  async close(): Promise<void> {
    await Promise.all(this.shards.map((handle) => handle.transport.stop()));
  }

  /**
   * A maker is about to be told it is authenticated: every remote shard's door hears first that this process
   * has makers, so no RFQ it creates afterwards leaves them out (rfq-wire.ts ToShardNode `makers`). Resolves
   * once each answered or could not (an unreachable shard hears it when it is joined again).
   */
  async announceMakers(): Promise<void> {
    // Until every door answered, the maker is not connected yet: the beats say "makers" meanwhile, or one sent
    // between two doors' answers would undo the first at its door just before the maker is told it is in.
    this.#announcing++;
    try {
      await Promise.all(this.shards.map((handle) => handle.transport.announceMakers?.()));
    } finally {
      // The maker is authenticated in the microtasks that follow (mm/authenticator.ts): no beat comes between.
      this.#announcing--;
    }
  }

  /** A new RFQ its shard accepted: to every connected maker, and the shard learns who got it. */
  private fanOut(shard: number, message: RfqMessage): void {
    const startNs = process.hrtime.bigint();
    this.makers.broadcast(message);
    // Same synchronous run as the publish: exactly the connections that were sent the RFQ.
    const makerIds = this.makers.connectedMakerIds();
    this.metrics.fanoutSeconds.observe(Number(process.hrtime.bigint() - startNs) / 1e9);
    this.#handle(shard).out.add({ kind: 'audience', requestId: message.request_id, makerIds });
  }

  /**
   * Frames for makers wait for the end of this event-loop turn (setImmediate: after its I/O), gathered per
   * connection, and go out corked: one turn holds the acks and results of many RFQs and of every shard, and
   * a write per frame was the main thread's largest cost (docs/performance.md). Order per connection is
   * kept. An RFQ's own broadcast always went out before any frame about it: those answer the makers'
   * messages about that RFQ.
   */
  private queueFrame(event: ToMakerEvent): void {
    const { makerId, frame } = event;
    let pending = this.framesByMaker.get(makerId);
    if (pending === undefined) this.framesByMaker.set(makerId, (pending = { frames: [frame], facts: null, unreplayed: null }));
    else pending.frames.push(frame);
    // The event is the fact (its fields): handed on as it came across the port, nothing copied.
    if (event.fact !== undefined) {
      (pending.facts ??= []).push(event);
      if (event.fact === 'last_look') (pending.unreplayed ??= []).push(pending.frames.length - 1);
    }
    if (this.isFrameFlushScheduled) return;
    this.isFrameFlushScheduled = true;
    setImmediate(this.flushFrames);
  }

  private readonly flushFrames = (): void => {
    const framesByMaker = this.framesByMaker;
    this.framesByMaker = new Map();
    this.isFrameFlushScheduled = false;
    for (const [makerId, pending] of framesByMaker)
      this.makers.sendFrames(makerId, pending.frames, pending.facts ?? NO_FACTS, pending.unreplayed);
  };

  #handle(shard: number): ShardHandle {
    const handle = this.byShard.get(shard);
    if (handle === undefined) throw new Error(`no shard ${shard}`); // a wiring bug: every number comes from the placement
    return handle;
  }

  /**
   * `message` builds the call's message around its id. (Not `{ ...command, callId }`: V8 keeps an object made
   * by a leading spread and then given more properties alive until a full collection, docs/performance.md.)
   */
  private call<T>(shard: number, message: (callId: number) => MainToShard): Promise<T> {
    const handle = this.#handle(shard);
    if (handle.calls.size >= MAX_OUTSTANDING_CALLS_PER_SHARD) return Promise.reject(overloaded());
    if (!handle.isReachable) return Promise.reject(errors.shardUnreachable());
    const callId = this.nextCallId++;
    return new Promise<T>((resolve, reject) => {
      handle.calls.set(callId, (outcome) => {
        if (outcome.ok) resolve(outcome.value as T);
        // OVERLOADED (the shard's active-RFQ limit) carries Retry-After, as every 503 does (contract section 2).
        else if (outcome === UNREACHABLE) reject(errors.shardUnreachable());
        else reject(outcome.code === 'OVERLOADED' ? overloaded() : new ApiError(outcome.code, outcome.message));
      });
      handle.out.add(message(callId));
    });
  }

  private spawn(init: ShardInit): { handle: ShardHandle; whenReady: Promise<number> } {
    const { shard } = init;
    let markReady!: (failedRfqs: number) => void;
    const whenReady = new Promise<number>((resolve) => (markReady = resolve));
    const transport = (this.options.transport ?? workerTransport)(init, {
      onBatch: (batch) => {
        if (batch.some(followsCommit)) this.options.refreshReads?.();
        for (const event of batch) {
          if (event.kind === 'ready') markReady(event.failedRfqs);
          else this.onEvent(handle, event);
        }
      },
      onFailure: ({ err, exitCode }) => {
        // RFQs it held are still reserved in LMDB: the next start's shards fail and release them.
        this.log.fatal({ err, shard, exitCode }, 'RFQ shard failed; stopping the service');
        const { onShardFailed } = this.options;
        if (onShardFailed !== undefined) return onShardFailed();
        crashLater(err instanceof Error ? err : new Error(`RFQ shard ${shard} failed (exit code ${exitCode})`));
      },
      allMarkets: () => this.options.allMarkets?.() ?? [],
      // Asked by a remote shard's transport from its join on; before the pool's start no maker can be connected.
      hasMakers: () => this.#announcing > 0 || (this.makers !== NOT_STARTED && this.makers.hasConnectedMakers()),
      onReachable: (isReachable) => {
        handle.isReachable = isReachable;
        if (isReachable) return;
        // Their answers are lost with the node (or will come to nobody): each caller gets a 503 now, not a
        // guess. What the node had decided stands; a create retried with its replay key finds its RFQ.
        const calls = [...handle.calls.values()];
        handle.calls.clear();
        for (const settle of calls) settle(UNREACHABLE);
      },
    });
    const handle: ShardHandle = {
      shard,
      transport,
      // Per turn: quotes from many maker sockets, read in one turn, reach the shard as one message.
      out: new Batcher((batch) => transport.send(packDeclines(batch)), 'turn'),
      calls: new Map(),
      activeRfqs: 0,
      isReachable: true,
    };
    return { handle, whenReady };
  }

  private onEvent(handle: ShardHandle, event: Exclude<ShardToMain, { kind: 'ready' }>): void {
    switch (event.kind) {
      case 'created':
      case 'status':
      case 'cancelled':
      case 'money':
      case 'withdrawn':
      case 'barrier': {
        const settle = handle.calls.get(event.callId);
        handle.calls.delete(event.callId);
        settle?.(event.outcome);
        return;
      }
      case 'broadcast':
        this.fanOut(handle.shard, event.message);
        return;
      case 'to_maker':
        return this.queueFrame(event);
      case 'terminal': {
        this.metrics.terminalTotal.inc({ status: event.result.status, error: event.result.error ?? '' });
        if (event.quotingUs !== null) this.metrics.quotingSeconds.observe(event.quotingUs / 1e6);
        this.metrics.selectionSeconds.observe(event.selectionUs / 1e6);
        this.metrics.persistSeconds.observe(event.persistUs / 1e6);
        // Wall clock, as created_at is (the announcing thread's Date.now()): whole milliseconds at both ends.
        this.metrics.endToEndSeconds.observe(Math.max(0, Date.now() - event.createdAtMs) / 1000);
        this.metrics.quotesPerRfq.observe(event.result.quotes_received);
        if (event.filledBy !== null) this.metrics.makerFillsTotal.inc({ maker: event.filledBy });
        this.waiters.deliver(event.result, event.isAwaitedByCreate);
        return;
      }
      case 'stats':
        handle.activeRfqs = event.activeRfqs;
        this.metrics.shardCommitsTotal.inc(event.commits);
        this.metrics.shardCommitTransactionsTotal.inc(event.commitTransactions);
        return;
      default: {
        const unknown: never = event;
        throw new Error(`unknown shard event ${JSON.stringify(unknown)}`);
      }
    }
  }
}
