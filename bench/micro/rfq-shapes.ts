// The records of one filled RFQ, as the shard writes them (the create, the fill, the completed record), shared by
// the storage benches (rfq-writes.ts, read-model.ts) so both measure the same shapes. RFQ `n` goes to user
// `u${(n * 7919) % USERS}` and maker `n % MAKERS`, two legs over MARKETS markets.
import { systemClock } from '../../src/lib/clock.js';
import { makerAccount, userAccount } from '../../src/records/ledger.js';
import { Ledger, type BalanceOwner } from '../../src/ledger/ledger.js';
import type { FillRecord } from '../../src/records/fills.js';
import { newRequestId } from '../../src/rfq/ids.js';
import type { CreateRfq } from '../../src/rfq/messages.js';
import { endedRecord, type RfqRecord } from '../../src/records/rfqs.js';
import { RfqWrites } from '../../src/rfq/rfq-writes.js';
import type { Store } from '../../src/store/db.js';

export const USERS = 10_000;
export const MAKERS = 10;
export const MARKETS = 40;
const WAGER_MICROS = 5_000_000n;

export const makerAddresses = Array.from({ length: MAKERS }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`);

export interface RfqShape {
  command: CreateRfq;
  created: RfqRecord;
  fill: FillRecord;
  completed: RfqRecord;
}

/** The records of filled RFQ number `n`, created at `nowMs`. */
export function rfqShape(n: number, nowMs: number): RfqShape {
  const userId = `u${(n * 7919) % USERS}`;
  const requestId = newRequestId(0, nowMs);
  const legs = [
    { marketId: 1 + (n % MARKETS), direction: 'up' as const },
    { marketId: 1 + ((n * 3 + 1) % MARKETS), direction: 'down' as const },
  ];
  const command = {
    replayKey: `u:${userId}:k${n}`,
    contentHash: 'c'.repeat(64),
    userId,
    wagerMicros: WAGER_MICROS.toString(),
  } as CreateRfq;
  const created: RfqRecord = {
    requestId,
    userId,
    wallet: `0x${'a'.repeat(40)}`,
    kind: 'unsigned',
    legs,
    wagerMicros: WAGER_MICROS.toString(),
    minOddsE4: 11_000,
    toleranceBps: 50,
    orderType: 2,
    isShielded: false,
    createdAtMs: nowMs,
    expiresAtMs: nowMs + 1_000,
    status: 'pending',
    quotesReceived: 0,
    fill: null,
    error: null,
    terminalAtMs: null,
  };
  const maker = makerAddresses[n % MAKERS]!;
  const fill: FillRecord = {
    requestId,
    makerAddress: maker,
    quoteId: `q${n}`,
    taker: `0x${'a'.repeat(40)}`,
    userId,
    legs,
    filledWagerMicros: '4000000',
    payoutMicros: '9000000',
    oddsE4: 22_500,
    atMs: nowMs,
    settledPaidMicros: null,
  };
  const completed = endedRecord(created, {
    status: 'completed',
    error: null,
    terminalAtMs: nowMs,
    fill: { makerAddress: maker, quoteId: `q${n}`, oddsE4: 22_500, filledWagerMicros: '4000000', payoutMicros: '9000000' },
  });
  return { command, created, fill, completed };
}

const everyone: BalanceOwner = { name: 'the bench', owns: () => true };

/** The shard's write path on `store` (a group-commit store), its users and makers funded. */
export async function fundedRfqWrites(store: Store): Promise<RfqWrites> {
  const ledger = new Ledger(store, everyone);
  await store.transact(() => {
    const nowMs = Date.now();
    for (let u = 0; u < USERS; u++) ledger.credit(userAccount(`u${u}`), 10n ** 12n, `bench:u${u}`, nowMs);
    for (const maker of makerAddresses) ledger.credit(makerAccount(maker), 10n ** 15n, `bench:${maker}`, nowMs);
  });
  return new RfqWrites(store, ledger, systemClock);
}

/** One filled RFQ on the shard's write path, in the transaction it is called in: the create, or the fill and its record. */
export function createInTxn(writes: RfqWrites, shape: RfqShape): void {
  writes.createInTxn(shape.command, shape.created, false);
}

export function fillInTxn(store: Store, writes: RfqWrites, shape: RfqShape): void {
  writes.fillInTxn(shape.completed, shape.fill, () => true);
  void store.db<RfqRecord>('rfqs').put(shape.completed.requestId, shape.completed);
}
