// Runs on the main thread: owns the piscina pool whose workers (verify-worker.ts) hash and recover
// signatures. Callers await a RecoverResult; when the bounded queue is full (or the pool is closing) the
// call rejects with VerifyPoolOverloadedError, which the HTTP layer maps to 503 OVERLOADED (contract
// section 2): nothing was accepted.
//
// Calls made during one event-loop turn go to the workers as one piscina task per thread (setImmediate:
// after the turn's I/O), because a piscina task costs the main thread ~25 % of a signed RFQ's main-thread
// time, more than the hop is worth per signature (docs/performance.md).

import assert from 'node:assert/strict';
import { Piscina } from 'piscina';
import { Batcher } from '../lib/batcher.js';
import type { RecoverResult } from './recover.js';
import type { RecoverItem, VerifyTask, VerifyTaskResult } from './verify-worker.js';

/**
 * Whose recovery it is. `order`: a signed RFQ order from an authenticated user (the default). `login`: a
 * wallet or maker login, which anyone may send without a token; it gets a bounded share of the pool and goes
 * behind the orders of its turn, so a login flood cannot starve signed orders. `oracle`: a signed price
 * report, also open to anyone, and up to ~390 of them per request: it waits in a queue of its own and goes
 * to the threads only while one is idle, ORACLE_BATCH_ITEMS at a time on at most a half of them:
 * without this, 8 posts of 380 bad reports pushed signed creates from 17 ms to ~400 ms p50.
 */
export type RecoverShare = 'order' | 'login' | 'oracle';

interface PendingRecover extends RecoverItem {
  share: RecoverShare;
  resolve(result: RecoverResult): void;
  reject(error: unknown): void;
}

// Share of the pool's bound (maxQueue) that login recoveries may hold at once: a quarter, so signed orders
// always have three quarters of the queue, and a full login share delays an order by at most a quarter of
// the queue's worth of recoveries (~9 ms at the default 256 per thread, ~140 µs each).
const LOGIN_SHARE_DIVISOR = 4;

// Oracle recoveries per task: ~1 ms of a thread (~100-140 µs each), the most an order that arrives just
// after an oracle task started waits behind it, on at most a half of the threads (at least one).
const ORACLE_BATCH_ITEMS = 8;

// Default bound on tasks waiting for a worker, per thread. Measured on the 2-vCPU dev VM: ~100 µs per native
// recovery plus ~40 µs of piscina round trip, so 256 queued tasks per thread are ~36 ms of waiting at most;
// beyond that a client is better served by an immediate 503 than by a slow 200.
const DEFAULT_MAX_QUEUE_PER_THREAD = 256;

// Time constant of the utilization average: long enough to smooth 100 µs tasks, short enough that a
// 15 s metrics scrape sees the current load rather than the pool's lifetime.
const UTILIZATION_WINDOW_MS = 10_000;

// Rounds of describe_thread tasks before whenLoaded gives up; one suffices unless piscina's dispatch changes.
const MAX_DESCRIBE_ROUNDS = 100;

// piscina 5 rejects a full queue with a plain Error (its errors.ts, TaskQueueAtLimit). The bounded-queue test
// pins this text, so a piscina upgrade that renames it fails loudly instead of turning 503s into 500s.
const PISCINA_QUEUE_FULL_MESSAGE = 'Task queue is at limit';

export interface VerifyPoolOptions {
  threads: number;
  /** Bound on accepted calls not yet answered; default 256 per thread. */
  maxQueue?: number;
  /** Bound on accepted login calls not yet answered; default a quarter of maxQueue (at least 1). */
  maxLoginInFlight?: number;
}

/**
 * The pool cannot take the task and nothing was accepted: its queue is full, or it is shutting down. Both
 * answer 503 OVERLOADED with Retry-After, so a client retries (later, or on another instance).
 */
export class VerifyPoolOverloadedError extends Error {
  readonly reason: 'QUEUE_FULL' | 'LOGIN_SHARE_FULL' | 'CLOSED';

  constructor(reason: 'QUEUE_FULL' | 'LOGIN_SHARE_FULL' | 'CLOSED') {
    super(
      reason === 'QUEUE_FULL'
        ? 'verify pool queue is full'
        : reason === 'LOGIN_SHARE_FULL'
          ? "the verify pool's share for logins is full"
          : 'verify pool is closed',
    );
    this.name = 'VerifyPoolOverloadedError';
    this.reason = reason;
  }
}

export function isPoolOverloaded(err: unknown): err is VerifyPoolOverloadedError {
  return err instanceof VerifyPoolOverloadedError;
}

export class VerifyPool {
  readonly #pool: Piscina<VerifyTask, VerifyTaskResult>;
  // Calls accepted and not yet settled. piscina's own close() drops tasks still waiting in its queue, so
  // close() waits for this to reach 0 first: an accepted call always gets its answer.
  #inFlight = 0;
  #onDrained: (() => void) | null = null;
  #closing: Promise<void> | null = null;
  readonly #threads: number;
  readonly #maxInFlight: number;
  /** Login calls accepted and not yet settled (a part of #inFlight), bounded by #maxLoginInFlight. */
  #loginInFlight = 0;
  readonly #maxLoginInFlight: number;
  readonly #pending = new Batcher<PendingRecover>((pending) => this.#flush(pending), 'turn');
  /** Oracle calls not yet sent to a thread, oldest first; bounded by #maxInFlight with everything else. */
  #oracleWaiting: PendingRecover[] = [];
  /** Tasks sent to piscina and not yet answered, and how many of them are oracle batches. */
  #tasksRunning = 0;
  #oracleTasksRunning = 0;
  readonly #maxOracleTasks: number;
  // Exponential average of the fraction of threads busy, as of #busyAtMs; updated when #inFlight changes.
  #busyAverage = 0;
  #busyAtMs = performance.now();
  #loaded: Promise<'native' | 'noble'> | null = null;

  constructor(opts: VerifyPoolOptions) {
    assert.ok(Number.isSafeInteger(opts.threads) && opts.threads >= 1, 'threads must be an integer >= 1');
    this.#threads = opts.threads;
    const maxQueue = opts.maxQueue ?? opts.threads * DEFAULT_MAX_QUEUE_PER_THREAD;
    assert.ok(Number.isSafeInteger(maxQueue) && maxQueue >= 1, 'maxQueue must be an integer >= 1');
    this.#maxInFlight = maxQueue;
    this.#maxLoginInFlight = opts.maxLoginInFlight ?? Math.max(1, Math.floor(maxQueue / LOGIN_SHARE_DIVISOR));
    assert.ok(Number.isSafeInteger(this.#maxLoginInFlight) && this.#maxLoginInFlight >= 1, 'maxLoginInFlight must be an integer >= 1');
    this.#maxOracleTasks = Math.max(1, Math.floor(opts.threads / 2));
    this.#pool = new Piscina<VerifyTask, VerifyTaskResult>({
      filename: new URL('./verify-worker.js', import.meta.url).href,
      // All threads start at once and never idle out: a cold worker on the request path costs tens of ms.
      minThreads: opts.threads,
      maxThreads: opts.threads,
      idleTimeout: Number.POSITIVE_INFINITY,
      // Our own bound (#maxInFlight, on calls) governs; piscina queues at most a few batches per thread.
      maxQueue,
    });
  }

  /**
   * Resolves, with the recovery backend they chose, once every thread has loaded its code and takes tasks.
   * The service waits for it before listening, so a first signed request does not wait for a thread's
   * start-up, and close() waits for it before stopping threads: piscina stops them with
   * `Worker.terminate()`, which aborts the whole process when it lands in a thread still loading modules
   * (node's require(esm) asserts, and the secp256k1 addon, built with C++ exceptions, calls
   * std::terminate when node-addon-api cannot throw on a terminating thread).
   */
  whenLoaded(): Promise<'native' | 'noble'> {
    this.#loaded ??= this.#describeEveryThread();
    return this.#loaded;
  }

  // A thread answers a task only after piscina has loaded the module in it. piscina hands each task to the
  // least busy thread, so one round of `threads` tasks reaches them all; the thread ids check that it did.
  async #describeEveryThread(): Promise<'native' | 'noble'> {
    const threadsSeen = new Set<number>();
    let backend: 'native' | 'noble' = 'noble';
    for (let round = 0; threadsSeen.size < this.#threads; round++) {
      assert.ok(round < MAX_DESCRIBE_ROUNDS, `verify threads did not all answer in ${MAX_DESCRIBE_ROUNDS} rounds`);
      const answers = Array.from({ length: this.#threads }, () => this.#pool.run({ kind: 'describe_thread' }));
      for (const answer of await Promise.all(answers)) {
        assert.ok(!Array.isArray(answer), 'describe_thread answers with a thread description');
        threadsSeen.add(answer.threadId);
        backend = answer.recoverBackend;
      }
    }
    return backend;
  }

  /**
   * Recovers the personal-sign signer of `message` on a worker thread. A `login` call is refused (503 by its
   * caller) once the login share is held, whatever room the queue has for orders.
   */
  recoverPersonalSigner(message: Uint8Array, sig65: Uint8Array, share: RecoverShare = 'order'): Promise<RecoverResult> {
    assert.ok(message instanceof Uint8Array && sig65 instanceof Uint8Array, 'message and sig65 must be Uint8Array');
    if (this.#closing !== null) return Promise.reject(new VerifyPoolOverloadedError('CLOSED'));
    if (this.#inFlight >= this.#maxInFlight) return Promise.reject(new VerifyPoolOverloadedError('QUEUE_FULL'));
    if (share === 'login' && this.#loginInFlight >= this.#maxLoginInFlight) {
      return Promise.reject(new VerifyPoolOverloadedError('LOGIN_SHARE_FULL'));
    }
    this.#markBusyChange();
    this.#inFlight++;
    if (share === 'login') this.#loginInFlight++;
    return new Promise<RecoverResult>((resolve, reject) => {
      const call = { message: ownBuffer(message), sig65: ownBuffer(sig65), share, resolve, reject };
      if (share !== 'oracle') return this.#pending.add(call);
      this.#oracleWaiting.push(call);
      this.#pumpOracle();
    });
  }

  /** Oracle calls accepted and not yet sent to a thread (for tests and metrics). */
  get oracleWaiting(): number {
    return this.#oracleWaiting.length;
  }

  /** Login calls accepted and not yet answered (for tests and metrics). */
  get loginInFlight(): number {
    return this.#loginInFlight;
  }

  /**
   * Sends the turn's calls as one batch per thread, in contiguous slices (order within a slice is kept),
   * orders before logins: a turn's logins never hold up its orders.
   */
  #flush(turn: PendingRecover[]): void {
    const pending = turn.some((call) => call.share === 'login')
      ? [...turn.filter((c) => c.share === 'order'), ...turn.filter((c) => c.share === 'login')]
      : turn;
    const sliceSize = Math.ceil(pending.length / this.#threads);
    for (let start = 0; start < pending.length; start += sliceSize) this.#run(pending.slice(start, start + sliceSize), false);
    this.#pumpOracle();
  }

  /**
   * Sends waiting oracle calls to the threads while one is idle, no other call waits for its turn's flush,
   * and fewer than #maxOracleTasks oracle batches run: an order never finds more than the oracle batches that
   * ran when it was called ahead of it (piscina's queue is first come, first served). Called when an oracle
   * call arrives, after each flush and whenever a task ends.
   */
  #pumpOracle(): void {
    while (
      this.#oracleWaiting.length > 0 &&
      this.#pending.size === 0 &&
      this.#tasksRunning < this.#threads &&
      this.#oracleTasksRunning < this.#maxOracleTasks
    ) {
      this.#run(this.#oracleWaiting.splice(0, ORACLE_BATCH_ITEMS), true);
    }
  }

  /** One piscina task for `slice`; every call of it is answered when the task ends. */
  #run(slice: PendingRecover[], isOracle: boolean): void {
    const task: VerifyTask = { kind: 'recover_personal_batch', items: slice.map(({ message, sig65 }) => ({ message, sig65 })) };
    this.#tasksRunning++;
    if (isOracle) this.#oracleTasksRunning++;
    const taskEnded = () => {
      this.#tasksRunning--;
      if (isOracle) this.#oracleTasksRunning--;
    };
    this.#pool.run(task).then(
      (results) => {
        taskEnded();
        assert.ok(Array.isArray(results) && results.length === slice.length, 'a verify batch answers every item');
        slice.forEach((call, i) => {
          this.#settleOne(call);
          call.resolve(results[i]!);
        });
        this.#pumpOracle();
      },
      (err: unknown) => {
        taskEnded();
        const error = poolError(err);
        for (const call of slice) {
          this.#settleOne(call);
          call.reject(error);
        }
        this.#pumpOracle();
      },
    );
  }

  /**
   * Fraction (0..1) of threads busy, averaged over about the last 10 s, for the ops metrics. Busy counts the
   * whole round trip (transfer + hashing + recovery). Not piscina's `utilization`: piscina 5.3 divides a
   * millisecond mean by 1000 (it reads ~0.001 at full load) and averages over the pool's whole lifetime.
   */
  get utilization(): number {
    return this.#busyAverageAt(performance.now());
  }

  /** Tasks waiting for a worker. */
  get queueSize(): number {
    return this.#pool.queueSize;
  }

  /** Refuses new calls, answers every accepted one, then stops the workers. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= this.#drainThenClose();
    return this.#closing;
  }

  async #drainThenClose(): Promise<void> {
    if (this.#inFlight > 0) await new Promise<void>((resolve) => (this.#onDrained = resolve));
    await this.whenLoaded(); // a pool closed as it starts: see whenLoaded
    await this.#pool.close();
  }

  #settleOne(call: PendingRecover): void {
    this.#markBusyChange();
    this.#inFlight--;
    if (call.share === 'login') this.#loginInFlight--;
    assert.ok(this.#loginInFlight >= 0, 'verify pool login count went negative');
    assert.ok(this.#inFlight >= 0, 'verify pool in-flight count went negative');
    if (this.#inFlight === 0) this.#onDrained?.();
  }

  // Folds the time since the last change, at the occupancy that held during it, into the average.
  #markBusyChange(): void {
    const nowMs = performance.now();
    this.#busyAverage = this.#busyAverageAt(nowMs);
    this.#busyAtMs = nowMs;
  }

  #busyAverageAt(nowMs: number): number {
    const busyNow = Math.min(this.#inFlight, this.#threads) / this.#threads;
    const weightNew = 1 - Math.exp(-(nowMs - this.#busyAtMs) / UTILIZATION_WINDOW_MS);
    return this.#busyAverage + (busyNow - this.#busyAverage) * weightNew;
  }
}

// Structured clone copies a view's whole backing ArrayBuffer, so a 60-byte view into a large request body
// buffer would copy the body: hand piscina a tight copy in that case.
function ownBuffer(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
}

/** piscina's queue-full error as our overload error (503); anything else as it is. */
function poolError(err: unknown): unknown {
  return err instanceof Error && err.message === PISCINA_QUEUE_FULL_MESSAGE ? new VerifyPoolOverloadedError('QUEUE_FULL') : err;
}
