// `node dist/bench/micro/read-model.js [--quick] [--committers-only]`: the read model's writer (src/store/write-behind.ts, issue 34)
// against today's shard write path, on the same LMDB writes. The writes of filled RFQs are recorded once from
// the real write path (RfqWrites and the Ledger, the shapes of rfq-writes.ts: ~22 puts and removes an RFQ, in
// two sets, the create and the fill) and then replayed as blind writes, so every variant writes the same keys
// and values and only the way they reach LMDB differs.
//
// 1. How a batch leaves the owner's thread: the same batches (100 RFQs, coalesced as the writer holds them)
//    committed by an lmdb-js `batch` (its write thread does the B-tree work), an async `transaction` (the
//    callback runs on the owner's thread), and `transactionSync` on a dedicated worker thread (the writes
//    cross by postMessage). Per RFQ: the owner thread's CPU, the process's; per batch: the wall time.
// 2. At 500, 1,000 and 2,000 RFQ/s for a few seconds each, a pacer (one tick a ms, as an actor's turns)
//    hands each RFQ's two write sets to (a) today's GroupCommit (two store.transact, one synchronous commit
//    per turn on the calling thread), (b) the write-behind at 10, 25, 50 and 100 ms, and (c) nothing (the
//    pacer's own cost). Per RFQ: the calling thread's CPU (/proc/self/task/<tid>/schedstat, ns) and the
//    process's (process.cpuUsage: lmdb-js's write thread included); LMDB commits per second; the lag from
//    `write` (or transact) to applied (or resolved), p50 and p99. Variants alternate, in reverse order on
//    the second round. Written to bench/results/read-model.json.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { DB_NAMES, openStore, type DbName, type Store } from '../../src/store/db.js';
import type { BlindWrite } from '../../src/store/records.js';
import { READ_MODEL_DEFAULTS, WriteBehind } from '../../src/store/write-behind.js';
import { repoRoot } from '../../test/helpers/paths.js';
import { createInTxn, fillInTxn, fundedRfqWrites, rfqShape } from './rfq-shapes.js';

interface RfqWriteSets {
  create: BlindWrite[];
  fill: BlindWrite[];
}

/** Records the blind writes of `count` filled RFQs made by the real write path (in a store of its own). */
async function recordWriteSets(count: number): Promise<RfqWriteSets[]> {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-read-model-record-'));
  const store = openStore(dir, { isGroupCommit: true });
  const writes = await fundedRfqWrites(store);
  let current: BlindWrite[] = [];
  for (const name of DB_NAMES) {
    const db = store.db<unknown>(name) as unknown as { put: (...a: unknown[]) => unknown; remove: (...a: unknown[]) => unknown };
    const put = db.put.bind(db);
    const remove = db.remove.bind(db);
    // Only the records: lmdb-js saves each database's msgpack structures with a put of its own (a symbol key).
    db.put = (key: unknown, value: unknown, ...rest: unknown[]) => {
      if (typeof key === 'string') current.push({ db: name, key: key as string, value } as BlindWrite);
      return put(key, value, ...rest);
    };
    db.remove = (key: unknown, ...rest: unknown[]) => {
      if (typeof key === 'string') current.push({ db: name, key: key as string, value: undefined } as BlindWrite);
      return remove(key, ...rest);
    };
  }
  const sets: RfqWriteSets[] = [];
  for (let n = 0; n < count; n++) {
    const shape = rfqShape(n, Date.now());
    const create: BlindWrite[] = (current = []);
    await store.transact(() => createInTxn(writes, shape));
    const fill: BlindWrite[] = (current = []);
    await store.transact(() => fillInTxn(store, writes, shape));
    sets.push({ create, fill });
  }
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  return sets;
}

function applyWrites(store: Store, writes: readonly BlindWrite[]): void {
  for (const write of writes) {
    const db = store.db<unknown>(write.db);
    if (write.value === undefined) void db.remove(write.key);
    else void db.put(write.key, write.value);
  }
}

/** CPU ns the thread has run (schedstat's first field): ns resolution, where stat's utime has 10 ms. */
function threadCpuNs(tid: number): number {
  return Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
}

function processCpuUs(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

function quantile(sorted: Float64Array, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;
}

const round1 = (x: number) => Math.round(x * 10) / 10;

// ---- 1. how a batch leaves the owner's thread -----------------------------------------------------------

type Batch = Map<DbName, Map<string, unknown>>;

function coalesce(sets: readonly RfqWriteSets[]): { batch: Batch; writes: number } {
  const batch: Batch = new Map();
  let writes = 0;
  for (const set of sets) {
    for (const write of [...set.create, ...set.fill]) {
      let keys = batch.get(write.db);
      if (keys === undefined) batch.set(write.db, (keys = new Map()));
      if (!keys.has(write.key)) writes++;
      keys.set(write.key, write.value);
    }
  }
  return { batch, writes };
}

interface Committer {
  name: string;
  commit(batch: Batch, seq: number): Promise<unknown>;
  close(): Promise<void>;
}

function putBatch(store: Store, batch: Batch, seq: number): void {
  for (const [name, keys] of batch) {
    const db = store.db<unknown>(name);
    for (const [key, value] of keys) {
      if (value === undefined) void db.remove(key);
      else void db.put(key, value);
    }
  }
  void store.db<number>('meta').put('readModel:bench:appliedSeq', seq);
}

function lmdbCommitter(dir: string, how: 'batch' | 'transaction'): Committer {
  const store = openStore(dir);
  return {
    name: how === 'batch' ? 'lmdb-js batch (write thread)' : 'lmdb-js async transaction (callback on owner)',
    commit: (batch, seq) =>
      how === 'batch' ? store.root.batch(() => putBatch(store, batch, seq)) : store.root.transaction(() => putBatch(store, batch, seq)),
    close: () => store.close(),
  };
}

function workerCommitter(dir: string): Committer {
  const worker = new Worker(new URL('./read-model-worker.js', import.meta.url), { workerData: { dir } });
  const waiting = new Map<number, () => void>();
  worker.on('message', (seq: number) => {
    waiting.get(seq)?.();
    waiting.delete(seq);
  });
  return {
    name: 'transactionSync on a worker thread',
    commit: (batch, seq) =>
      new Promise<void>((done) => {
        waiting.set(seq, done);
        const writes: Array<[DbName, string, unknown]> = [];
        for (const [name, keys] of batch) for (const [key, value] of keys) writes.push([name, key, value]);
        worker.postMessage({ seq, writes });
      }),
    close: async () => void (await worker.terminate()),
  };
}

async function compareCommitters(sets: readonly RfqWriteSets[], dir: string, rounds: number) {
  const RFQS_PER_BATCH = 100;
  const committers = [
    lmdbCommitter(join(dir, 'batch'), 'batch'),
    lmdbCommitter(join(dir, 'transaction'), 'transaction'),
    workerCommitter(join(dir, 'worker')),
  ];
  await new Promise((r) => setTimeout(r, 200)); // the worker's start-up out of the figures
  const totals = committers.map(() => ({ ownerNs: 0, processUs: 0, wallMs: [] as number[], writes: 0 }));
  for (let round = 0; round < rounds; round++) {
    const start = (round * RFQS_PER_BATCH) % (sets.length - RFQS_PER_BATCH);
    const { batch, writes } = coalesce(sets.slice(start, start + RFQS_PER_BATCH));
    for (let i = 0; i < committers.length; i++) {
      const at = (round + i) % committers.length; // alternated: each goes first as often
      const total = totals[at]!;
      const owner0 = threadCpuNs(process.pid);
      const process0 = processCpuUs();
      const t0 = performance.now();
      await committers[at]!.commit(batch, round + 1);
      total.wallMs.push(performance.now() - t0);
      total.ownerNs += threadCpuNs(process.pid) - owner0;
      total.processUs += processCpuUs() - process0;
      total.writes += writes;
    }
  }
  const rows = committers.map((committer, i) => {
    const total = totals[i]!;
    const rfqs = rounds * RFQS_PER_BATCH;
    const wall = Float64Array.from(total.wallMs).sort();
    return {
      committer: committer.name,
      rfqsPerBatch: RFQS_PER_BATCH,
      writesPerBatch: Math.round(total.writes / rounds),
      ownerCpuUsPerRfq: round1(total.ownerNs / 1000 / rfqs),
      processCpuUsPerRfq: round1(total.processUs / rfqs),
      batchMsP50: round1(quantile(wall, 0.5)),
      batchMsP99: round1(quantile(wall, 0.99)),
    };
  });
  for (const committer of committers) await committer.close();
  return rows;
}

// ---- 2. at a rate ----------------------------------------------------------------------------------------

interface Driver {
  name: string;
  /** Hands RFQ `index`'s two write sets over; `applied` once both are in LMDB. False: refused. */
  submit(index: number, sets: RfqWriteSets, applied: () => void): boolean;
  commits(): number;
  close(): Promise<void>;
}

function groupCommitDriver(dir: string): Driver {
  const store = openStore(dir, { isGroupCommit: true });
  return {
    name: 'GroupCommit (today)',
    submit(_index, sets, applied) {
      void Promise.all([store.transact(() => applyWrites(store, sets.create)), store.transact(() => applyWrites(store, sets.fill))]).then(
        applied,
      );
      return true;
    },
    commits: () => store.groupCommitCounts!.commits,
    close: () => store.close(),
  };
}

function writeBehindDriver(dir: string, intervalMs: number): Driver {
  const store = openStore(dir);
  const waiting: Array<{ seq: number; applied: () => void }> = [];
  let head = 0;
  const writer = new WriteBehind(store, {
    owner: 'bench',
    intervalMs,
    maxBatchWrites: READ_MODEL_DEFAULTS.maxBatchWrites,
    maxPendingWrites: READ_MODEL_DEFAULTS.maxPendingWrites,
    onApplied: (seq) => {
      while (head < waiting.length && waiting[head]!.seq <= seq) waiting[head++]!.applied();
    },
    onCommitFailure: (error) => {
      throw error;
    },
  });
  return {
    name: `write-behind ${intervalMs} ms`,
    submit(index, sets, applied) {
      if (!writer.hasRoom(sets.create.length + sets.fill.length)) return false;
      writer.write(2 * index + 1, sets.create);
      writer.write(2 * index + 2, sets.fill);
      waiting.push({ seq: 2 * index + 2, applied });
      return true;
    },
    commits: () => writer.commits,
    close: async () => {
      await writer.flush();
      await store.close();
    },
  };
}

function pacerOnlyDriver(): Driver {
  return {
    name: 'pacer only (no writes)',
    submit(_index, _sets, applied) {
      applied();
      return true;
    },
    commits: () => 0,
    close: async () => undefined,
  };
}

interface RateRow {
  variant: string;
  round: number;
  offeredRfqPerS: number;
  rfqs: number;
  refused: number;
  callingThreadCpuUsPerRfq: number;
  processCpuUsPerRfq: number;
  commitsPerS: number;
  lagMsP50: number;
  lagMsP99: number;
}

async function drive(driver: Driver, sets: readonly RfqWriteSets[], ratePerS: number, seconds: number, round: number): Promise<RateRow> {
  const rfqs = Math.min(sets.length, Math.round(ratePerS * seconds));
  const lags = new Float64Array(rfqs);
  let submitted = 0;
  let finished = 0;
  let refused = 0;
  const commits0 = driver.commits();
  const startMs = performance.now();
  const thread0 = threadCpuNs(process.pid);
  const process0 = processCpuUs();
  await new Promise<void>((allDone) => {
    const tick = (): void => {
      const due = Math.min(rfqs, Math.floor(((performance.now() - startMs) * ratePerS) / 1000));
      while (submitted < due) {
        const index = submitted++;
        const atMs = performance.now();
        const isTaken = driver.submit(index, sets[index]!, () => {
          lags[index] = performance.now() - atMs;
          if (++finished === rfqs) allDone();
        });
        if (!isTaken) {
          refused++;
          if (++finished === rfqs) allDone();
        }
      }
      if (submitted < rfqs) setTimeout(tick, 1);
    };
    tick();
  });
  const wallMs = performance.now() - startMs;
  const threadNs = threadCpuNs(process.pid) - thread0;
  const processUs = processCpuUs() - process0;
  lags.sort();
  return {
    variant: driver.name,
    round,
    offeredRfqPerS: ratePerS,
    rfqs,
    refused,
    callingThreadCpuUsPerRfq: round1(threadNs / 1000 / rfqs),
    processCpuUsPerRfq: round1(processUs / rfqs),
    commitsPerS: round1(((driver.commits() - commits0) / wallMs) * 1000),
    lagMsP50: Math.round(quantile(lags, 0.5) * 100) / 100,
    lagMsP99: Math.round(quantile(lags, 0.99) * 100) / 100,
  };
}

async function main(): Promise<void> {
  const isQuick = process.argv.includes('--quick');
  const seconds = isQuick ? 0.5 : 4;
  const rates = [500, 1_000, 2_000];
  const rounds = isQuick ? 1 : 2;
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-read-model-'));
  const loadAtStart = loadavg()[0]!;
  try {
    const sets = await recordWriteSets(Math.max(...rates) * seconds);
    const writesPerRfq = round1(sets.reduce((n, s) => n + s.create.length + s.fill.length, 0) / sets.length);
    console.log(`recorded ${sets.length} filled RFQs, ${writesPerRfq} writes each`);
    const committers = await compareCommitters(sets, join(dir, 'committers'), isQuick ? 5 : 40);
    console.table(committers);
    if (process.argv.includes('--committers-only')) return;
    const rows: RateRow[] = [];
    let run = 0;
    for (let round = 1; round <= rounds; round++) {
      for (const ratePerS of rates) {
        const makers = [
          () => pacerOnlyDriver(),
          () => groupCommitDriver(join(dir, `run-${run}`)),
          () => writeBehindDriver(join(dir, `run-${run}`), 10),
          () => writeBehindDriver(join(dir, `run-${run}`), 25),
          () => writeBehindDriver(join(dir, `run-${run}`), 50),
          () => writeBehindDriver(join(dir, `run-${run}`), 100),
        ];
        if (round % 2 === 0) makers.reverse();
        for (const make of makers) {
          run++;
          const driver = make();
          rows.push(await drive(driver, sets, ratePerS, seconds, round));
          await driver.close();
          console.log(JSON.stringify(rows.at(-1)));
        }
      }
    }
    console.table(rows);
    const out = resolve(repoRoot, 'bench/results');
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, 'read-model.json'),
      `${JSON.stringify({ at: new Date().toISOString(), isQuick, loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadavg()[0], writesPerRfq, committers, rows }, null, 2)}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
