// Main thread; pure. A turn's messages to one shard travel as one structured clone (shard-pool.ts), and a
// decline is the message a fan-out sends most: every maker of the audience that passes sends one. Cloned
// as an object each (`{kind, requestId, makerId}`: its keys and the request id are written again for every
// decline), 1,000 declines cost ~1-1.7 ms to serialize and deserialize here; packed as one object per run of
// declines of the same RFQ, with the makers' ids in one array, 0.13-0.15 ms (docs/performance.md, "Declines
// packed"). Only consecutive declines are packed, so the shard handles every message in the order it came.
import type { MainToShard } from './messages.js';

/** `batch` with each run of consecutive declines of one RFQ as one `declines` message; the rest as it was. */
export function packDeclines(batch: MainToShard[]): MainToShard[] {
  let packed: MainToShard[] | null = null;
  let run: Extract<MainToShard, { kind: 'declines' }> | null = null;
  for (let i = 0; i < batch.length; i++) {
    const message = batch[i]!;
    if (message.kind !== 'decline') {
      run = null;
      packed?.push(message);
      continue;
    }
    if (run !== null && run.requestId === message.requestId) {
      run.makerIds.push(message.makerId);
      continue;
    }
    // The first decline of a batch that had none so far starts the copy; nothing is copied for a batch without.
    packed ??= batch.slice(0, i);
    run = { kind: 'declines', requestId: message.requestId, makerIds: [message.makerId] };
    packed.push(run);
  }
  return packed ?? batch;
}
