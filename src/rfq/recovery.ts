// Main thread, at start, before the shards take traffic. Contract section 6 (crash): every RFQ that was
// active when the process died ends failed SERVICE_RESTARTED and its reservation is released, in one
// transaction per RFQ. A fill that was made durable is already terminal and is left alone.
import type { Clock } from '../clock.js';
import { Ledger } from '../ledger/ledger.js';
import type { Store } from '../store/db.js';
import { endedRecord, isTerminal, type RfqRecord } from './records.js';

export async function failInterruptedRfqs(store: Store, clock: Clock): Promise<number> {
  const ledger = new Ledger(store);
  const rfqs = store.db<RfqRecord>('rfqs');
  const active = store.db<true>('rfqActive');
  const ids = [...active.getKeys()];
  await Promise.all(
    ids.map((requestId) =>
      store.transact(() => {
        const record = rfqs.get(requestId);
        void active.remove(requestId);
        if (record === undefined || isTerminal(record.status)) return;
        const nowMs = clock.nowMs();
        ledger.releaseInTxn(record.userId, BigInt(record.wagerMicros), `rfq:${requestId}`, nowMs);
        void rfqs.put(requestId, endedRecord(record, { status: 'failed', fill: null, error: 'SERVICE_RESTARTED', terminalAtMs: nowMs }));
      }),
    ),
  );
  return ids.length;
}
