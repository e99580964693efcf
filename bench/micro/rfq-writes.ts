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
import { openStore, type Store } from '../../src/store/db.js';
import { createInTxn, fillInTxn, fundedRfqWrites, rfqShape } from './rfq-shapes.js';

/** Databases whose writes the write path never reads back, so dropping them measures their pages alone. */
const DROPPABLE = ['rfqKeys', 'userRfqs', 'fills', 'makerTakerFills', 'openPositions', 'accountJournal', 'transfers'];

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
  const writes = await fundedRfqWrites(store);
  const withoutAt = process.argv.indexOf('--without');
  const without = withoutAt === -1 ? undefined : process.argv[withoutAt + 1];
  if (without !== undefined && !DROPPABLE.includes(without)) throw new Error(`--without takes one of ${DROPPABLE.join(', ')}`);
  const writeCount = countWrites(store, without);
  let seq = 0;

  /** One filled RFQ: its create and its terminal write, two transactions of the same group (as the shard). */
  function oneRfq(cpu: number[]): Promise<unknown> {
    const shape = rfqShape(seq++, Date.now());
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
      store.transact(timed(() => createInTxn(writes, shape))),
      store.transact(timed(() => fillInTxn(store, writes, shape))),
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
