// Runs on a verify worker thread (piscina, started by verify-pool.ts); never imported by the main thread
// except for its types. Hashing + secp256k1 recovery are ~all of an order's CPU cost, so they live here
// and the main thread's event loop stays free for I/O.

import { threadId } from 'node:worker_threads';
import { recoverBackend, recoverPersonalSigner, type RecoverResult } from './recover.js';
import { announceThread } from '../lib/thread-announce.js';

announceThread('verify');

export interface RecoverItem {
  message: Uint8Array;
  sig65: Uint8Array;
}

/**
 * Every task a verify worker accepts: one `kind` per operation, so the switch below is exhaustive. Recoveries
 * travel in batches (the pool gathers one event-loop turn's worth): a piscina task costs the main thread
 * more than the recovery costs this one, so one task per batch is what keeps the main thread free.
 * `describe_thread` answers once the thread has loaded this module and is taking tasks (verify-pool.ts,
 * whenLoaded).
 */
export type VerifyTask = { kind: 'recover_personal_batch'; items: RecoverItem[] } | { kind: 'describe_thread' };

export interface ThreadDescription {
  threadId: number;
  recoverBackend: 'native' | 'noble';
}

export type VerifyTaskResult = RecoverResult[] | ThreadDescription;

export default function runVerifyTask(task: VerifyTask): VerifyTaskResult {
  switch (task.kind) {
    case 'recover_personal_batch':
      return task.items.map((item) => recoverPersonalSigner(item.message, item.sig65));
    case 'describe_thread':
      return { threadId, recoverBackend };
    default:
      return assertNever(task);
  }
}

function assertNever(task: never): never {
  throw new TypeError(`unknown verify task: ${JSON.stringify(task)}`);
}
