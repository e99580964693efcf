// The RFQ shards, the owners of every balance, in this test's process: the real ShardPool and RfqShard actors
// over a real LMDB data directory, on the in-process transport (src/rfq/in-process-transport.ts) instead of
// worker threads, for tests that drive contests, settlement or the ledger without HTTP.
import { Registry } from 'prom-client';
import { createLogger } from '../../src/lib/log.js';
import { inProcessTransport } from '../../src/rfq/in-process-transport.js';
import { createRfqMetrics } from '../../src/rfq/metrics.js';
import { ShardPool, type MakerFanout } from '../../src/rfq/shard-pool.js';

/** No maker is connected: RFQs end `timeout` at once. (No test here creates one.) */
const NO_MAKERS: MakerFanout = {
  broadcast: () => 0,
  connectedMakerIds: () => [],
  hasConnectedMakers: () => false,
  send: () => false,
  sendFrames: () => false,
};

/**
 * Started and recovered: every shard has failed the RFQs a previous "process" left active. `refreshReads`
 * renews the test's own store's read snapshot after the shards' answers, as the service does (app.ts).
 */
export async function startInProcessShards(dataDir: string, refreshReads: () => void, shardCount = 2): Promise<ShardPool> {
  const metrics = createRfqMetrics(new Registry(), {
    activeRfqs: () => 0,
    outstandingCalls: () => 0,
    outstandingCallsByShard: () => [],
    unclaimedResults: () => 0,
    waiters: () => 0,
    verifyUtilization: () => 0,
    verifyQueue: () => 0,
  });
  const pool = new ShardPool(
    {
      shardCount,
      dataDir,
      quoteWindowMs: 300,
      lastLookMs: 200,
      maxFinalizingMs: 1000,
      maxActiveRfqs: 1000,
      createCoalesceMs: 0,
      engine: 'lmdb',
    },
    metrics,
    createLogger('silent'),
    { transport: inProcessTransport, refreshReads },
  );
  await pool.start(NO_MAKERS);
  return pool;
}
