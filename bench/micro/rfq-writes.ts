// `node dist/bench/micro/rfq-writes.js [--quick] [--without <db>]`: what one filled RFQ costs the storage, measured on the
// shard's own write path (RfqWrites and the Ledger in the group commit, store/group-commit.ts) without the
// rest of the service: per RFQ, the LMDB writes it makes, the shard-thread CPU its writes cost before the
// commit, the bytes the commit writes (4 KiB pages) and the flushes; per commit, its wall time. Groups of
// 1..16 RFQs per commit, since the group commit's size follows the load (docs/performance.md).
//
// This is the number issue 24 moves ("pages and flushes per RFQ"): the load generator's figures move with
// everything else on the two cores, these do not (pages and writes are counts; the CPU and commit times are
// medians over hundreds of groups on the same data).
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../src/clock.js';
import { Ledger, type BalanceOwner } from '../../src/ledger/ledger.js';
import { makerAccount, userAccount } from '../../src/ledger/accounts.js';
import { newRequestId } from '../../src/rfq/ids.js';
import { RfqWrites } from '../../src/rfq/rfq-writes.js';
import { endedRecord, type RfqRecord } from '../../src/rfq/records.js';
import type { FillRecord } from '../../src/rfq/fills.js';
import type { CreateRfq } from '../../src/rfq/messages.js';
import { openStore, type Store } from '../../src/store/db.js';

const USERS = 10_000;
const MAKERS = 10;
const MARKETS = 40;
const WAGER_MICROS = 5_000_000n;

/** Databases whose writes the write path never reads back, so dropping them measures their pages alone. */
const DROPPABLE = ['rfqKeys', 'userRfqs', 'fills', 'makerTakerFills', 'openPositions', 'accountJournal', 'transfers'];

const everyone: BalanceOwner = { name: 'the bench', owns: () => true };

/** What this process has written through syscalls so far (/proc/self/io wchar): a commit's pwrites. */
function bytesWritten(): number {
  const line = readFileSync('/proc/self/io', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('wchar:'));
  return Number(line?.split(/\s+/)[1] ?? 0);
}

/**
 * Counts the LMDB writes (put and remove) made through the store's named databases. `--without <db>` drops
 * that database's writes instead (only those no read of the write path depends on): the difference in pages
 * is that database's share of a commit.
 */
function countWrites(store: Store, without: string | undefined): () => number {
  let writes = 0;
  for (const name of [
    'rfqs',
    'rfqKeys',
    'rfqActive',
    'userRfqs',
    'fills',
    'makerTakerFills',
    'openPositions',
    'accounts',
    'transfers',
    'accountJournal',
    'holds',
  ] as const) {
    const db = store.db<unknown>(name) as unknown as { put: (...a: unknown[]) => unknown; remove: (...a: unknown[]) => unknown };
    const put = db.put.bind(db);
    const remove = db.remove.bind(db);
    if (name === without) {
      db.put = () => true;
      db.remove = () => true;
      continue;
    }
    db.put = (...a: unknown[]) => (writes++, put(...a));
    db.remove = (...a: unknown[]) => (writes++, remove(...a));
  }
  return () => writes;
}

function median(values: number[]): number {
  const sorted = values.slice().sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

async function main(): Promise<void> {
  const isQuick = process.argv.includes('--quick');
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-rfq-writes-'));
  const store = openStore(dir, { isGroupCommit: true });
  const ledger = new Ledger(store, everyone);
  const writes = new RfqWrites(store, ledger, systemClock);
  const makers = Array.from({ length: MAKERS }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`);
  await store.transact(() => {
    const nowMs = Date.now();
    for (let u = 0; u < USERS; u++) ledger.credit(userAccount(`u${u}`), 10n ** 12n, `bench:u${u}`, nowMs);
    for (const maker of makers) ledger.credit(makerAccount(maker), 10n ** 15n, `bench:${maker}`, nowMs);
  });
  const withoutAt = process.argv.indexOf('--without');
  const without = withoutAt === -1 ? undefined : process.argv[withoutAt + 1];
  if (without !== undefined && !DROPPABLE.includes(without)) throw new Error(`--without takes one of ${DROPPABLE.join(', ')}`);
  const writeCount = countWrites(store, without);
  let seq = 0;

  /** One filled RFQ: its create and its terminal write, two transactions of the same group (as the shard). */
  function oneRfq(cpu: number[]): Promise<unknown> {
    const n = seq++;
    const userId = `u${(n * 7919) % USERS}`;
    const nowMs = Date.now();
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
    const maker = makers[n % MAKERS]!;
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
    const timed =
      <T>(fn: () => T) =>
      () => {
        const t0 = performance.now();
        try {
          return fn();
        } finally {
          cpu.push(performance.now() - t0);
        }
      };
    return Promise.all([
      store.transact(timed(() => writes.createInTxn(command, created, false))),
      store.transact(
        timed(() => {
          writes.fillInTxn(completed, fill, () => true);
          void store.db<RfqRecord>('rfqs').put(requestId, completed);
        }),
      ),
    ]);
  }

  const rows: string[] = [];
  rows.push(
    '| RFQs per commit | LMDB writes per RFQ | write CPU µs per RFQ | KiB written per commit | 4 KiB pages per RFQ | commit ms (median) |',
  );
  rows.push('|---|---|---|---|---|---|');
  for (const groupSize of [1, 2, 4, 8, 16]) {
    const rounds = isQuick ? 30 : 300;
    const commitMs: number[] = [];
    const cpu: number[] = [];
    let bytes = 0;
    const writesBefore = writeCount();
    for (let round = 0; round < rounds; round++) {
      const before = bytesWritten();
      const t0 = performance.now();
      await Promise.all(Array.from({ length: groupSize }, () => oneRfq(cpu)));
      commitMs.push(performance.now() - t0);
      bytes += bytesWritten() - before;
    }
    const rfqs = rounds * groupSize;
    const cpuPerRfq = (cpu.reduce((a, b) => a + b, 0) / rfqs) * 1000;
    rows.push(
      `| ${groupSize} | ${((writeCount() - writesBefore) / rfqs).toFixed(1)} | ${cpuPerRfq.toFixed(1)} | ${(bytes / rounds / 1024).toFixed(0)} | ${(bytes / rfqs / 4096).toFixed(1)} | ${median(commitMs).toFixed(3)} |`,
    );
  }
  console.log(rows.join('\n'));
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

await main();
