// Entry point of a ledger check's worker thread (check-runner.ts starts one per check): opens the shared
// LMDB environment by path, runs the check over one read snapshot, posts the result and ends. On its own
// thread so that a check over millions of transfers holds neither the main thread nor any writer.
import { parentPort, workerData } from 'node:worker_threads';
import { openStore } from '../store/db.js';
import { checkLedger } from './check.js';
import { announceThread } from '../lib/thread-announce.js';

const port = parentPort;
if (port === null) throw new Error('check-worker must run as a worker thread');
announceThread('check');
const { dataDir, mapSizeBytes, nowMs } = workerData as { dataDir: string; mapSizeBytes?: number; nowMs: number };
const store = openStore(dataDir, mapSizeBytes === undefined ? {} : { mapSizeBytes });
try {
  // The live service's time: an RFQ still active long past its expiry is a finding (holds-audit.ts).
  port.postMessage(checkLedger(store, nowMs));
} finally {
  await store.close();
}
