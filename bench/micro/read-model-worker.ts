// The read-model bench's third way out of the owner's thread (read-model.ts): a small dedicated thread that
// commits each batch it is sent with transactionSync and answers its seq.
import { parentPort, workerData } from 'node:worker_threads';
import { openStore, type DbName } from '../../src/store/db.js';

const store = openStore((workerData as { dir: string }).dir);

parentPort!.on('message', (batch: { seq: number; writes: Array<[DbName, string, unknown]> }) => {
  store.root.transactionSync(() => {
    for (const [name, key, value] of batch.writes) {
      const db = store.db<unknown>(name);
      if (value === undefined) void db.remove(key);
      else void db.put(key, value);
    }
    void store.db<number>('meta').put('readModel:bench:appliedSeq', batch.seq);
  });
  parentPort!.postMessage(batch.seq);
});
