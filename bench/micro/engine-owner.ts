// `node dist/bench/micro/engine-owner.js [--quick]`: what the engine's owner actor (src/engine/owner.ts)
// costs per filled RFQ on its own thread, against the ~22 LMDB writes per filled RFQ the shard makes today
// (bench/micro/rfq-writes.ts: 242–565 µs of write CPU per RFQ); and how long recovery takes from a journal of
// 1,000,000 records (the engine issue's figure) and from a snapshot.
//
// Per RFQ the actor decides a reservation (create) and a fill with its maker's lock (end), each one journal
// record: the decision, the effects applied to the in-memory book, and the record's bytes (encodeEffects).
// One owner, so the fill is local (the two-phase path adds a message each way, not CPU here). Then a journal of
// such records, each position settled 1,000 RFQs later (a record each), is framed as the journal frames it
// (wal/record.ts), written to a file, and replayed through Journal.open into a fresh book, as a restart does;
// then the book's snapshot is written and read back.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { makerAccount, PROTOCOL, userAccount, type AccountId } from '../../src/records/ledger.js';
import { Book } from '../../src/engine/book.js';
import { decodeEffects, decodeSnapshot, encodeEffects, encodeSnapshot } from '../../src/engine/codec.js';
import { MoneyOwner, type Step } from '../../src/engine/owner.js';
import { Journal } from '../../src/wal/journal.js';
import { encodeFileHeader, encodeRecordInto, FILE_HEADER_BYTES, recordBytes } from '../../src/wal/record.js';
import { repoRoot } from '../../test/helpers/paths.js';

const LIMITS = { lockTimeoutMs: 1_000, lockQueryMs: 2_000, resendMs: 100, resendPerTick: 64 };
const USERS = 10_000;
const MAKERS = 10;
const ownerOf = (_account: AccountId) => 0;

function cpuUs(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** A funded owner: every user and maker credited; `journal` gets each credit's step. */
function fundedOwner(journal: (step: Step) => void = () => undefined): MoneyOwner {
  const owner = new MoneyOwner(new Book(0, ownerOf), LIMITS);
  for (let u = 0; u < USERS; u++)
    journal(owner.call(0, { op: 'credit', account: userAccount(`u${u}`), amountMicros: 10n ** 12n, key: `u${u}` }, 0));
  for (let m = 0; m < MAKERS; m++)
    journal(owner.call(0, { op: 'credit', account: makerAccount(maker(m)), amountMicros: 10n ** 15n, key: `m${m}` }, 0));
  journal(owner.call(0, { op: 'credit', account: PROTOCOL, amountMicros: 10n ** 12n, key: 'protocol' }, 0));
  return owner;
}

const maker = (m: number) => `0x${m.toString(16).padStart(40, '0')}`;
const rfqRef = (i: number) => `rfq:${i.toString(16).padStart(12, '0')}-7abc-8def-0123456789ab`;
/** Positions left open at any time in the recovery's journal. */
const OPEN_POSITIONS = 1_000;

/** The records of RFQ `i`: its create, then its fill (every RFQ fills, each a position left open). */
function rfqSteps(owner: MoneyOwner, i: number, nowMs: number): [Step, Step] {
  const ref = rfqRef(i);
  const created = owner.call(i, { op: 'reserve', userId: `u${i % USERS}`, amountMicros: 5_000_000n, ref }, nowMs);
  const filled = owner.call(
    i,
    { op: 'fill', ref, filledMicros: 4_000_000n, makerAddress: maker(i % MAKERS), liabilityMicros: 3_200_000n },
    nowMs,
  );
  return [created, filled];
}

interface DecisionFigures {
  rfqs: number;
  decideUsPerRfq: number;
  decideAndEncodeUsPerRfq: number;
  recordsPerRfq: number;
  journalBytesPerRfq: number;
}

function decisionCost(rfqs: number): DecisionFigures {
  // Warm up, then alternate the two measurements twice so drift weighs on both alike.
  const figures = { decide: [] as number[], encode: [] as number[], bytes: 0 };
  for (let round = 0; round < 3; round++) {
    for (const isEncoding of [false, true]) {
      const owner = fundedOwner();
      const startUs = cpuUs();
      let bytes = 0;
      for (let i = 0; i < rfqs; i++) {
        const [created, filled] = rfqSteps(owner, i, 1_700_000_000_000 + i);
        if (isEncoding) bytes += encodeEffects(created.effects).length + encodeEffects(filled.effects).length;
      }
      const usPerRfq = (cpuUs() - startUs) / rfqs;
      if (round === 0) continue;
      (isEncoding ? figures.encode : figures.decide).push(usPerRfq);
      if (isEncoding) figures.bytes = bytes / rfqs;
    }
  }
  const mean = (xs: number[]) => Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 10) / 10;
  return {
    rfqs,
    decideUsPerRfq: mean(figures.decide),
    decideAndEncodeUsPerRfq: mean(figures.encode),
    recordsPerRfq: 2,
    journalBytesPerRfq: Math.round(figures.bytes),
  };
}

interface RecoveryFigures {
  records: number;
  fileMiB: number;
  replayMs: number;
  replayRecordsPerS: number;
  snapshotBytes: number;
  snapshotWriteMs: number;
  snapshotReadMs: number;
  holds: number;
}

async function recovery(dir: string, records: number): Promise<RecoveryFigures> {
  const path = join(dir, 'journal');
  const chunks: Buffer[] = [encodeFileHeader(1)];
  let fileBytes = FILE_HEADER_BYTES;
  let seq = 0;
  const write = (step: Step) => {
    const payload = encodeEffects(step.effects);
    const framed = Buffer.allocUnsafe(recordBytes(payload.length));
    encodeRecordInto(framed, 0, ++seq, payload);
    chunks.push(framed);
    fileBytes += framed.length;
  };
  const owner = fundedOwner(write);
  // Positions settle as they would: each RFQ's position 1,000 RFQs later, so about 1,000 stay open.
  for (let i = 0; seq < records; i++) {
    const [created, filled] = rfqSteps(owner, i, 1_700_000_000_000 + i);
    write(created);
    write(filled);
    if (i >= OPEN_POSITIONS) {
      const settled = i - OPEN_POSITIONS;
      write(
        owner.call(
          i,
          { op: 'settle', ref: rfqRef(settled), makerAddress: maker(settled % MAKERS), outcome: settled % 2 === 0 ? 'won' : 'lost' },
          0,
        ),
      );
    }
  }
  writeFileSync(path, Buffer.concat(chunks));
  chunks.length = 0;

  const book = new Book(0, ownerOf);
  const startMs = performance.now();
  const { journal, recovery: found } = Journal.open(
    path,
    { maxPendingBytes: 1 << 21, preallocateBytes: 0, onDurable: () => undefined, onFailure: () => undefined },
    (_seq, payload) => {
      for (const effect of decodeEffects(payload)) book.apply(effect);
    },
  );
  const replayMs = performance.now() - startMs;
  await journal.close();
  if (found.lastSeq !== seq) throw new Error(`replayed to ${found.lastSeq} of ${seq}`);
  // The book replayed is the book that decided.
  if (encodeSnapshot(book, seq).compare(encodeSnapshot(owner.book, seq)) !== 0) throw new Error('the replayed book differs');

  const snapStartMs = performance.now();
  const snapshot = encodeSnapshot(owner.book, seq);
  const snapshotWriteMs = performance.now() - snapStartMs;
  const readStartMs = performance.now();
  decodeSnapshot(snapshot, ownerOf);
  const snapshotReadMs = performance.now() - readStartMs;
  return {
    records: seq,
    fileMiB: Math.round((fileBytes / 2 ** 20) * 10) / 10,
    replayMs: Math.round(replayMs),
    replayRecordsPerS: Math.round(seq / (replayMs / 1000)),
    snapshotBytes: snapshot.length,
    snapshotWriteMs: Math.round(snapshotWriteMs),
    snapshotReadMs: Math.round(snapshotReadMs),
    holds: owner.book.holds.size,
  };
}

async function main(): Promise<void> {
  const isQuick = process.argv.includes('--quick');
  const decisions = decisionCost(isQuick ? 5_000 : 100_000);
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-engine-owner-'));
  try {
    const replay = await recovery(dir, isQuick ? 20_000 : 1_000_000);
    console.table([decisions]);
    console.table([replay]);
    const out = resolve(repoRoot, 'bench/results');
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, 'engine-owner.json'),
      `${JSON.stringify({ at: new Date().toISOString(), isQuick, decisions, replay }, null, 2)}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
