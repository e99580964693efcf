// One owner of a shard node, on its thread (shard-node-worker.ts): the owner actor of its partitions
// (engine/owner-runtime.ts: journal, snapshots, LMDB read model under the node's data directory, built with
// its RFQ shard), linked to the other owners over NATS (nats-links.ts). Here: the money calls of its
// partitions (money-calls.ts, checked by money-schema.ts and isDecidableHere below), looks at its book, and
// its part of the cluster's ledger check (ledger-check.ts). The owner is named by its first partition
// (partitions.ts); the cluster's partition map says where every other name lives.
import assert from 'node:assert/strict';
import type { NatsConnection, Subscription } from 'nats';
import type { Logger } from 'pino';
import type { Book } from '../engine/book.js';
import { bookHoldDifferences } from '../engine/check.js';
import type { MoneyCall } from '../ledger/money-ops.js';
import { bucketsOf, poolRef, PROTOCOL } from '../records/ledger.js';
import type { OwnerRuntime } from '../engine/owner-runtime.js';
import { checkTransfers } from '../ledger/check.js';
import type { OwnerCheck } from './ledger-check.js';
import type { Store } from '../store/db.js';
import type { BlindWrite } from '../store/records.js';
import type { MoneyReply } from './money-calls.js';
import { decidingName, isMoneyRequest, type CheckedMoneyRequest } from './money-schema.js';
import type { PartitionMap } from './partitions.js';
import { decode, encode, subjects } from './wire.js';

export interface OwnerNodeOptions {
  nc: NatsConnection;
  /** The owner this runs: the first partition it owns in `map`. */
  owner: number;
  map: PartitionMap;
  /** The owner (its RFQ shard's: shard-node-worker.ts), linked to the others over NATS. */
  runtime: OwnerRuntime;
  /** Its read model: an LMDB environment of its own (its ledger check is its own). */
  store: Store;
  log: Logger;
}

/** An owner's book as a look shows it: amounts as decimal strings, so the look reads the same in any language. */
export interface BookLook {
  owner: number;
  accounts: Record<string, Record<string, string>>;
  holds: Record<string, { account: string; bucket: string; amountMicros: string; isPending: boolean }>;
  /** Channel commands sent and not yet acknowledged, over all peers. */
  unacknowledged: number;
  /** Fills waiting for a maker's lock on another owner. */
  fillsInFlight: number;
  /** Money calls received since the process started, repeats included. */
  callsReceived: number;
}

export class OwnerNode {
  readonly #runtime: OwnerRuntime;
  readonly #store: Store;
  readonly #subscriptions: Subscription[] = [];
  #callsReceived = 0;

  constructor(private readonly options: OwnerNodeOptions) {
    const { owner, map, nc, log } = options;
    assert.equal(map.ownerOfPartition(owner), owner, `owner ${owner} is not the first partition of its own in the map`);
    this.#store = options.store;
    this.#runtime = options.runtime;
    for (const partition of map.partitionsOf(owner)) {
      this.#subscriptions.push(
        nc.subscribe(subjects.partitionMoney(partition), {
          callback: (error, msg) => {
            if (error !== null) return log.warn({ err: error }, 'money call subscription error');
            this.#callsReceived++;
            const request = this.#checked(msg.data);
            if (request === null) return void msg.respond(encode(INVALID));
            const made = this.#runtime.call(this.#runtime.withEnding(request.call), request.facts as BlindWrite[], request.id);
            if (made === 'overloaded') return void msg.respond(encode({ ok: false, code: 'OVERLOADED' } satisfies MoneyReply));
            void made.answer.then((answer) => msg.respond(encode(answer satisfies MoneyReply)));
          },
        }),
      );
    }
    this.#subscriptions.push(
      nc.subscribe(subjects.ownerBook(owner), { callback: (error, msg) => error === null && msg.respond(encode(this.look())) }),
      nc.subscribe(subjects.ownerCheck(owner), {
        callback: (error, msg) => {
          if (error !== null) return;
          // No answer when it cannot be taken (the node is closing): the asker's deadline says so.
          this.check().then(
            (check) => msg.respond(encode(check)),
            (err: unknown) => log.warn({ err }, 'a ledger check could not be taken'),
          );
        },
      }),
    );
  }

  /**
   * The request in `bytes` if it is a money call this owner decides; null (answered INVALID, nothing decided)
   * for bytes that are not one, or a call whose account, key or protocol another owner holds: a caller's
   * bug or a stale partition map, which must not stop this node.
   */
  #checked(bytes: Uint8Array): CheckedMoneyRequest | null {
    let request: unknown;
    try {
      request = decode(bytes);
    } catch {
      return null;
    }
    if (!isMoneyRequest(request)) return null;
    const { book } = this.#runtime;
    // A repeat is told its first answer, whatever has changed since (the call was checked when it first came).
    if (book.replies.has(request.id)) return request;
    const name = decidingName(request.call);
    if (name !== null && this.options.map.ownerOf(name) !== this.options.owner) return null;
    return isDecidableHere(request.call, book) ? request : null;
  }

  get recovery() {
    return this.#runtime.recovery;
  }

  look(): BookLook {
    const { book } = this.#runtime;
    const accounts: BookLook['accounts'] = {};
    for (const [account, buckets] of book.accounts) {
      accounts[account] = Object.fromEntries(Object.entries(buckets).map(([bucket, micros]) => [bucket, String(micros)]));
    }
    const holds: BookLook['holds'] = {};
    for (const [ref, hold] of book.holds) {
      holds[ref] = {
        account: hold.account,
        bucket: hold.bucket,
        amountMicros: String(hold.amountMicros),
        isPending: hold.pendingFor !== undefined,
      };
    }
    let unacknowledged = 0;
    for (const outbox of book.outboxes.values()) unacknowledged += outbox.entries.length;
    const { owner } = this.options;
    return { owner, accounts, holds, unacknowledged, fillsInFlight: this.#runtime.fillsInFlight, callsReceived: this.#callsReceived };
  }

  /** This owner's part of the cluster's ledger check, once LMDB holds everything it decided before the call. */
  async check(): Promise<OwnerCheck> {
    await this.#runtime.barrier();
    const check = checkTransfers(this.#store);
    // What LMDB cannot show: the book's own held buckets against its holds, which decide.
    for (const d of bookHoldDifferences(this.#runtime.book)) {
      check.ok = false;
      check.differences.push({
        account: d.account,
        bucket: d.bucket,
        expected_micros: String(d.holdsMicros),
        actual_micros: String(d.statedMicros ?? 0n),
        ...(d.ref === undefined ? { reason: 'holds' } : { reason: 'negative', ref: d.ref }),
      });
    }
    return { owner: this.options.owner, check };
  }

  /** Stops taking calls (the owner, closed after, makes what was decided durable and its answers leave). */
  close(): void {
    for (const subscription of this.#subscriptions) subscription.unsubscribe();
  }
}

const INVALID: MoneyReply = { ok: false, code: 'INVALID' };

/**
 * What the owner asserts of its callers in one process, checked here against its book for a caller across the
 * network: an account that is one (and, to withdraw, not the protocol's), a fill within its reservation, a prize
 * from a pool that is open, a pool closed holding no more than its lane says it collected. A stake's collection is not taken from the network at all: it lands in the pool on
 * the protocol's owner, which only the contest's lane knows to be open, and a stake arriving at a closed pool
 * would stop that owner at every start (its channel resends it).
 */
function isDecidableHere(call: MoneyCall, book: Book): boolean {
  switch (call.op) {
    case 'credit':
      return isAccount(call.account);
    case 'withdraw':
      return isAccount(call.account) && call.account !== PROTOCOL;
    case 'fill': {
      const hold = book.holds.get(call.ref);
      return hold?.bucket !== 'reserved' || call.filledMicros <= hold.amountMicros;
    }
    case 'pay_prize':
      return book.holds.has(poolRef(call.contestId));
    case 'close_pool': {
      // Holding more than its lane says it collected is the lane's bug: the owner asserts it in one process.
      const pool = book.holds.get(poolRef(call.contestId));
      return pool === undefined || pool.amountMicros <= call.expectedMicros;
    }
    case 'collect':
      return false;
    default:
      return true;
  }
}

function isAccount(name: string): boolean {
  try {
    bucketsOf(name);
    return true;
  } catch {
    return false;
  }
}
