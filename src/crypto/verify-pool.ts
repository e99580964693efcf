// Runs on the main thread: owns the piscina pool whose workers (verify-worker.ts) hash and recover
// signatures. Callers await a RecoverResult; when the bounded queue is full the call rejects with
// VerifyPoolOverloadedError, which the HTTP layer maps to 503 OVERLOADED (contract section 2) without
// having accepted anything.

import assert from 'node:assert/strict';
import { Piscina } from 'piscina';
import type { RecoverResult } from './recover.js';
import type { VerifyTask, VerifyTaskResult } from './verify-worker.js';

// Default bound on tasks waiting for a worker, per thread. At ~25-100 µs per recovery (docs/performance.md)
// 256 queued tasks per thread are at most a few tens of ms of waiting: beyond that a client is better served
// by an immediate 503 than by a slow 200.
const DEFAULT_MAX_QUEUE_PER_THREAD = 256;

// piscina 5 rejects with plain Errors; these are its messages for a full queue (errors.ts: TaskQueueAtLimit,
// NoTaskQueueAvailable). A test pins them, so a piscina upgrade that renames them fails loudly.
const PISCINA_QUEUE_FULL_MESSAGES: ReadonlySet<string> = new Set([
  'Task queue is at limit',
  'No task queue available and all Workers are busy',
]);

export interface VerifyPoolOptions {
  threads: number;
  /** Bound on queued (not yet running) tasks; default 256 per thread. */
  maxQueue?: number;
}

/** The verify queue is full: nothing was accepted; answer 503 OVERLOADED with Retry-After. */
export class VerifyPoolOverloadedError extends Error {
  constructor() {
    super('verify pool queue is full');
    this.name = 'VerifyPoolOverloadedError';
  }
}

export function isPoolOverloaded(err: unknown): err is VerifyPoolOverloadedError {
  return err instanceof VerifyPoolOverloadedError;
}

export class VerifyPool {
  readonly #pool: Piscina<VerifyTask, VerifyTaskResult>;

  constructor(opts: VerifyPoolOptions) {
    assert.ok(Number.isSafeInteger(opts.threads) && opts.threads >= 1, 'threads must be an integer >= 1');
    const maxQueue = opts.maxQueue ?? opts.threads * DEFAULT_MAX_QUEUE_PER_THREAD;
    assert.ok(Number.isSafeInteger(maxQueue) && maxQueue >= 1, 'maxQueue must be an integer >= 1');
    this.#pool = new Piscina<VerifyTask, VerifyTaskResult>({
      filename: new URL('./verify-worker.js', import.meta.url).href,
      // All threads start at once and never idle out: a cold worker on the request path costs tens of ms.
      minThreads: opts.threads,
      maxThreads: opts.threads,
      idleTimeout: Number.POSITIVE_INFINITY,
      maxQueue,
    });
  }

  /** Recovers the personal-sign signer of `message` on a worker thread. */
  recoverPersonalSigner(message: Uint8Array, sig65: Uint8Array): Promise<RecoverResult> {
    assert.ok(message instanceof Uint8Array && sig65 instanceof Uint8Array, 'message and sig65 must be Uint8Array');
    const task: VerifyTask = { kind: 'recover_personal', message: ownBuffer(message), sig65: ownBuffer(sig65) };
    return this.#pool.run(task).catch(mapPoolError);
  }

  /** Fraction (0..1) of worker time spent running tasks, for the ops metrics. */
  get utilization(): number {
    return this.#pool.utilization;
  }

  /** Tasks waiting for a worker. */
  get queueSize(): number {
    return this.#pool.queueSize;
  }

  /** Finishes running and queued tasks, then stops the workers. */
  close(): Promise<void> {
    return this.#pool.close();
  }
}

// Structured clone copies a view's whole backing ArrayBuffer, so a 60-byte view into a large request body
// buffer would copy the body: hand piscina a tight copy in that case.
function ownBuffer(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
}

function mapPoolError(err: unknown): never {
  if (err instanceof Error && PISCINA_QUEUE_FULL_MESSAGES.has(err.message)) throw new VerifyPoolOverloadedError();
  throw err;
}
