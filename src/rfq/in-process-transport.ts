// The shard actor on the calling thread, behind the same seam as a worker (shard-transport.ts): for tests
// that drive the pool, the ledger's owners and the contest actor in one process with a real LMDB store.
// Messages are cloned both ways, as a thread boundary would, and each batch is delivered on a later turn.
// Never used by the service. The shard commits through lmdb-js's asynchronous transactions here, not its
// synchronous group commit (shard-host.ts says why).
import type { ShardTransportFactory } from './shard-transport.js';
import { ShardHost } from './shard-host.js';

export const inProcessTransport: ShardTransportFactory = (init, events) => {
  let isStopped = false;
  const host = new ShardHost(
    init,
    (batch) => {
      if (!isStopped) events.onBatch(structuredClone(batch));
    },
    false,
  );
  return {
    send: (batch) => {
      const copy = structuredClone(batch);
      setImmediate(() => {
        if (!isStopped) host.deliver(copy);
      });
    },
    stop: () =>
      new Promise((resolve) =>
        // After this turn's messages; transactions still on their way finish before the store closes.
        setImmediate(() => {
          isStopped = true;
          host.stopTimers();
          resolve();
        }),
      ),
  };
};
