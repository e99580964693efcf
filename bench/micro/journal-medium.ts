// `node dist/bench/micro/journal-medium.js [--quick]`: which medium a shard's journal should be (the engine
// issue: "an append-only LMDB database committed by lmdb-js's own write thread, or a file per shard with
// checksummed records and fdatasync"), measured as the actor would use it: each event-loop turn appends a
// burst of records at an offered rate (the RFQs that turn decided, two ~200-byte records each) and goes on
// without waiting; a
// record counts as done when its medium says it is durable.
//
// Per medium and offered rate: records/s, append → durable latency p50/p99, and the CPU of the actor's own
// thread per record (what the journal takes from deciding) beside the whole process's (the write threads
// included). Then the recovery time of a journal of 1,000,000 records. Written to bench/results/journal-medium.json.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { open as openLmdb } from 'lmdb';
import { Journal } from '../../src/wal/journal.js';
import { repoRoot } from '../../test/helpers/paths.js';

const RECORD_BYTES = 200;
/** Offered records/s: 1,000 and 5,000 filled RFQs a second at two records each, and a flood. */
const RATES_PER_S = [2_000, 10_000, 50_000] as const;
/** The pacer's tick: each tick appends the records due since the last, as one turn of the actor would. */
const TICK_MS = 1;

interface Medium {
  name: string;
  /** Appends one record; `done` is called once it is durable. */
  append(payload: Buffer, done: () => void): void;
  close(): Promise<void>;
}

/** A file journal (src/wal/journal.ts): one callback per group, so each record's `done` waits in a queue. */
function fileMedium(path: string, preallocateBytes: number): Medium {
  const waiting: Array<{ seq: number; done: () => void }> = [];
  const { journal } = Journal.open(
    path,
    {
      maxPendingBytes: 64 << 20,
      preallocateBytes,
      onDurable: (seq) => {
        let i = 0;
        while (i < waiting.length && waiting[i]!.seq <= seq) waiting[i++]!.done();
        waiting.splice(0, i);
      },
      onFailure: (error) => {
        throw error;
      },
    },
    () => undefined,
  );
  return {
    name: preallocateBytes === 0 ? 'file, growing' : `file, ${preallocateBytes >> 20} MiB written ahead`,
    append(payload, done) {
      const seq = journal.append(payload);
      if (seq === null) throw new Error('journal full: the bench outran the disk by 64 MiB');
      waiting.push({ seq, done });
    },
    close: () => journal.close(),
  };
}

/** An append-only LMDB database, its puts committed (and flushed) by lmdb-js's write thread. */
function lmdbMedium(dir: string): Medium {
  const root = openLmdb<Buffer, number>({ path: dir, compression: false, noSubdir: false, overlappingSync: false, mapSize: 2 ** 32 });
  const db = root.openDB<Buffer, number>({ name: 'journal', keyEncoding: 'uint32', encoding: 'binary' });
  let seq = 0;
  return {
    name: 'lmdb-js, async commits',
    append(payload, done) {
      void db.put(++seq, payload).then(done);
    },
    close: () => root.close(),
  };
}

/** utime + stime of one thread of this process, in µs (USER_HZ = 100). */
function threadCpuUs(tid: number): number {
  const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

function processCpuUs(): number {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

interface Row {
  medium: string;
  offeredPerS: number;
  records: number;
  recordsPerS: number;
  latencyP50Us: number;
  latencyP99Us: number;
  actorCpuUsPerRecord: number;
  processCpuUsPerRecord: number;
}

function quantile(sorted: Float64Array, q: number): number {
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!);
}

/** Appends `records` records at `ratePerS`, each tick (one turn) the ones due since the last. */
async function drive(medium: Medium, records: number, ratePerS: number): Promise<Row> {
  const payload = Buffer.alloc(RECORD_BYTES, 0x5a);
  const latencies = new Float64Array(records);
  let appended = 0;
  let finished = 0;
  const startMs = performance.now();
  const actorStart = threadCpuUs(process.pid);
  const processStart = processCpuUs();
  await new Promise<void>((allDone) => {
    const tick = (): void => {
      const due = Math.min(records, Math.floor(((performance.now() - startMs) * ratePerS) / 1000));
      while (appended < due) {
        const index = appended++;
        const atMs = performance.now();
        medium.append(payload, () => {
          latencies[index] = (performance.now() - atMs) * 1000;
          if (++finished === records) allDone();
        });
      }
      if (appended < records) setTimeout(tick, TICK_MS);
    };
    tick();
  });
  const wallMs = performance.now() - startMs;
  const actorUs = threadCpuUs(process.pid) - actorStart;
  const processUs = processCpuUs() - processStart;
  latencies.sort();
  return {
    medium: medium.name,
    offeredPerS: ratePerS,
    records,
    recordsPerS: Math.round((records / wallMs) * 1000),
    latencyP50Us: quantile(latencies, 0.5),
    latencyP99Us: quantile(latencies, 0.99),
    actorCpuUsPerRecord: Math.round((actorUs / records) * 10) / 10,
    processCpuUsPerRecord: Math.round((processUs / records) * 10) / 10,
  };
}

/** Writes `records` records to a new file journal, then times a reopen that replays them all. */
async function recoveryMs(dir: string, records: number): Promise<{ records: number; fileMiB: number; replayMs: number }> {
  const path = join(dir, 'recovery.journal');
  const medium = fileMedium(path, 0);
  const payload = Buffer.alloc(RECORD_BYTES, 0x33);
  for (let written = 0; written < records;) {
    for (let i = 0; i < 10_000 && written < records; i++, written++) medium.append(payload, () => undefined);
    await new Promise(setImmediate);
  }
  await medium.close();
  let replayed = 0;
  const startMs = performance.now();
  const { journal } = Journal.open(
    path,
    { maxPendingBytes: 1 << 21, preallocateBytes: 0, onDurable: () => undefined, onFailure: () => undefined },
    () => {
      replayed++;
    },
  );
  const replayMs = Math.round(performance.now() - startMs);
  await journal.close();
  if (replayed !== records) throw new Error(`replayed ${replayed} of ${records}`);
  return { records, fileMiB: Math.round(((records * (RECORD_BYTES + 16)) / 2 ** 20) * 10) / 10, replayMs };
}

async function main(): Promise<void> {
  const isQuick = process.argv.includes('--quick');
  const records = isQuick ? 5_000 : 100_000;
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-journal-medium-'));
  const rows: Row[] = [];
  try {
    for (const ratePerS of RATES_PER_S) {
      // Alternated, each medium on a fresh file or environment, so drift over the run weighs on all alike.
      const media = [
        () => fileMedium(join(dir, `grow-${ratePerS}`), 0),
        () => fileMedium(join(dir, `ahead-${ratePerS}`), 4 << 20),
        () => lmdbMedium(join(dir, `lmdb-${ratePerS}`)),
      ];
      for (const make of media) {
        const medium = make();
        rows.push(await drive(medium, Math.min(records, ratePerS * (isQuick ? 1 : 4)), ratePerS));
        await medium.close();
      }
    }
    const recovery = await recoveryMs(dir, isQuick ? 100_000 : 1_000_000);
    console.table(rows);
    console.log(`recovery: ${recovery.records} records (${recovery.fileMiB} MiB) replayed in ${recovery.replayMs} ms`);
    const out = resolve(repoRoot, 'bench/results');
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, 'journal-medium.json'),
      `${JSON.stringify({ at: new Date().toISOString(), isQuick, rows, recovery }, null, 2)}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
