// Runs on a verify worker thread (piscina, started by verify-pool.ts); never imported by the main thread
// except for its types. Hashing + secp256k1 recovery are ~all of an order's CPU cost, so they live here
// and the main thread's event loop stays free for I/O.

import { recoverPersonalSigner, type RecoverResult } from './recover.js';

/** Every task a verify worker accepts: one `kind` per operation, so the switch below is exhaustive. */
export type VerifyTask = { kind: 'recover_personal'; message: Uint8Array; sig65: Uint8Array };

export type VerifyTaskResult = RecoverResult;

export default function runVerifyTask(task: VerifyTask): VerifyTaskResult {
  switch (task.kind) {
    case 'recover_personal':
      return recoverPersonalSigner(task.message, task.sig65);
    default:
      return assertNever(task.kind);
  }
}

function assertNever(kind: never): never {
  throw new TypeError(`unknown verify task kind: ${String(kind)}`);
}
