// The owner's thread (an RFQ shard's, in the service). Everything an owner needs around its decisions: the
// host (owner-host.ts: journal, snapshots, answers released once durable), its read model's writer on the
// thread's LMDB environment (store/write-behind.ts), its links to the other owners (peer-links.ts between
// threads of one process, cluster/nats-links.ts between processes), and the
// timer that drives its resends, fate questions and lock timeouts. Clients call it and get the decision at
// once (a reservation refused or taken, before anyone is told of the RFQ) and a promise of the answer that
// settles when the decision is durable.
import { transferId, type AccountId } from '../records/ledger.js';
import type { DbName, Store } from '../store/db.js';
import type { BlindWrite, RecordTypes } from '../store/records.js';
import { READ_MODEL_DEFAULTS, WriteBehind } from '../store/write-behind.js';
import type { Book } from './book.js';
import type { Effect } from './effects.js';
import { OwnerHost, type ReadModelRead } from './owner-host.js';
import type { OwnerLimits } from './owner.js';
import type { MoneyAnswer, MoneyCall } from '../ledger/money-ops.js';
import type { OwnerLinks } from './peer-links.js';
import type { PeerMessage } from './owner.js';

export interface OwnerRuntimeOptions {
  /** This owner's journal and snapshots. */
  dir: string;
  self: number;
  /** Which owner an account or a credit key belongs to (routing.ts ownerOfName; cluster/partitions.ts). */
  ownerOf: (name: AccountId) => number;
  /** The thread's LMDB environment: the read model. */
  store: Store;
  /** This owner's links to the other owners, made to hand what arrives to `deliver`. */
  links: (deliver: (from: number, message: PeerMessage) => void) => OwnerLinks;
  limits: OwnerLimits;
  /** How often the owner's timers run (resends, fate questions, lock timeouts). */
  tickMs: number;
  snapshotEveryRecords: number;
  maxPendingBytes: number;
  firstRecord?: Effect[];
  interruptedFacts?: (ref: string, read: ReadModelRead) => readonly BlindWrite[];
  nowMs(): number;
  /** The journal, a snapshot or the read model failed for good: the thread must stop. */
  onFailure(error: Error): void;
}

/** A call's decision now, and its answer once durable (the same answer, or a remote fill's). */
export type OwnerCall = { decided: MoneyAnswer | 'pending'; answer: Promise<MoneyAnswer> } | 'overloaded';

export class OwnerRuntime {
  readonly #host: OwnerHost;
  readonly #writer: WriteBehind;
  readonly #links: OwnerLinks;
  readonly #answers = new Map<number, (answer: MoneyAnswer) => void>();
  readonly #tick: NodeJS.Timeout;
  #nextCallId = 1;

  constructor(options: OwnerRuntimeOptions) {
    let host: OwnerHost | null = null;
    this.#writer = new WriteBehind(options.store, {
      owner: `owner-${options.self}`,
      ...READ_MODEL_DEFAULTS,
      onApplied: () => host?.readModelApplied(),
      onCommitFailure: () => {}, // the writer retries; room.ts makes every thread refuse new work meanwhile
    });
    this.#links = options.links((from, message) => this.#host.peer(from, message));
    host = OwnerHost.open({
      dir: options.dir,
      self: options.self,
      ownerOf: options.ownerOf,
      limits: options.limits,
      snapshotEveryRecords: options.snapshotEveryRecords,
      maxPendingBytes: options.maxPendingBytes,
      nowMs: options.nowMs,
      release: (outputs) => {
        for (const output of outputs) {
          if (output.to === 'peer') this.#links.send(output.owner, output.message);
          else {
            const settle = this.#answers.get(output.callId);
            this.#answers.delete(output.callId);
            settle?.(output.answer);
          }
        }
      },
      onFailure: options.onFailure,
      readModel: { sink: this.#writer, maxWaitingWrites: READ_MODEL_DEFAULTS.maxPendingWrites },
      ...(options.firstRecord === undefined ? {} : { firstRecord: options.firstRecord }),
      ...(options.interruptedFacts === undefined ? {} : { interruptedFacts: options.interruptedFacts }),
    });
    this.#host = host;
    this.#tick = setInterval(() => this.#host.tick(), options.tickMs).unref();
  }

  get book(): Book {
    return this.#host.owner.book;
  }

  get recovery() {
    return this.#host.recovery;
  }

  /** Fills waiting for a maker's lock on another owner. */
  get fillsInFlight(): number {
    return this.#host.owner.inFlightCount;
  }

  /** Whose account (or credit key: creditRef) `name` is. */
  ownerOf(name: AccountId): number {
    return this.book.ownerOf(name);
  }

  /** `requestId`: a call from across the network, which its client may send again (owner.ts MoneyOwner.call). */
  call(call: MoneyCall, facts: readonly BlindWrite[] = [], requestId?: string): OwnerCall {
    const callId = this.#nextCallId++;
    let settle!: (answer: MoneyAnswer) => void;
    const answer = new Promise<MoneyAnswer>((resolve) => (settle = resolve));
    this.#answers.set(callId, settle);
    const decided = this.#host.call(callId, call, facts, requestId);
    if (decided === 'overloaded') {
      this.#answers.delete(callId);
      return 'overloaded';
    }
    return { decided, answer };
  }

  /**
   * A withdrawal's end whose hold is gone, with how it ended, for the owner to tell a repeat from the other end.
   * The transfer that settled the hold says, read as this owner last wrote it: an end decided a moment ago,
   * not yet durable, counts (the owner decides in order, so the later end must see the earlier).
   */
  withEnding(call: MoneyCall): MoneyCall {
    if (call.op !== 'finish_withdrawal' || this.book.holds.has(call.ref)) return call;
    const { ref, isCompleted } = call;
    if (this.read('transfers', transferId(ref, 'complete')) !== undefined)
      return { op: 'finish_withdrawal', ref, isCompleted, wasCompleted: true };
    if (this.read('transfers', transferId(ref, 'fail')) !== undefined)
      return { op: 'finish_withdrawal', ref, isCompleted, wasCompleted: false };
    return call;
  }

  /** Whether credit key `key` was used, as its owner (this one) decided: in memory or, once forgotten there, in LMDB. */
  isCreditKeyUsed(key: string): boolean {
    return this.#host.creditKeyUse(key) !== undefined;
  }

  /** A read model record as this owner last wrote it (its own writes included before LMDB has them). */
  read<N extends DbName>(db: N, key: string): RecordTypes[N] | undefined {
    return this.#host.readModel(db, key);
  }

  /** Resolves once LMDB holds everything this owner decided before the call (owner-host.ts readModelBarrier). */
  barrier(): Promise<void> {
    return this.#host.readModelBarrier();
  }

  /** Flushes the journal (its answers leave) and the read model, then lets the thread go. */
  async close(): Promise<void> {
    clearInterval(this.#tick);
    await this.#host.close();
    await this.#writer.flush();
    this.#links.close();
  }
}
