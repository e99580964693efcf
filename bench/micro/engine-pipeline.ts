// `node dist/bench/micro/engine-pipeline.js [--quick] [--only today|engine]`: one filled RFQ's durability end to end, today's way and
// the engine's, alternated in one process on the same records (rfq-shapes.ts), as many RFQs in flight as a
// loaded shard has. Today: the create, then the fill with its records, each a transaction of the shard's group
// commit on this thread (RfqWrites and the Ledger: ~22 LMDB writes). The engine: the owner (OwnerHost)
// decides the reservation with the create's records as its facts, then the fill with the fill's and the
// end's records, each one journal record made durable by the journal's group commit (fdatasync on libuv's
// pool); the read model's writer (store/write-behind.ts) puts the same records into LMDB behind it, its
// B-tree work on lmdb-js's write thread. An RFQ's next step starts when its previous one is durable, as in the
// shard.
//
// Per RFQ: CPU of this thread (the shard's, where the actor runs) and of the whole process (with lmdb-js's
// write thread and libuv's flushes), and RFQs per second; for the engine also how long the read model took
// to catch up at the end. Counted from /proc (10 ms ticks) over thousands of RFQs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OwnerHost } from '../../src/engine/owner-host.js';
import type { MoneyAnswer, MoneyCall } from '../../src/ledger/money-ops.js';
import { makerAccount, userAccount } from '../../src/records/ledger.js';
import { rfqRef } from '../../src/records/rfqs.js';
import { createdWrites, endedWrites, fillWrites } from '../../src/rfq/rfq-records.js';
import { openStore } from '../../src/store/db.js';
import type { BlindWrite } from '../../src/store/records.js';
import { READ_MODEL_DEFAULTS, WriteBehind } from '../../src/store/write-behind.js';
import { childMainThreadCpuMs, selfCpuMs } from '../load/cpu.js';
import { createInTxn, fillInTxn, fundedRfqWrites, makerAddresses, rfqShape, USERS, type RfqShape } from './rfq-shapes.js';

const IN_FLIGHT = 16;
interface Side {
  name: string;
  /** One filled RFQ, durable when it resolves. */
  oneRfq(shape: RfqShape): Promise<void>;
  /** Everything written is in LMDB (the engine's read model caught up). */
  settle(): Promise<void>;
  close(): Promise<void>;
}

async function today(dir: string): Promise<Side> {
  const store = openStore(dir, { isGroupCommit: true });
  const writes = await fundedRfqWrites(store);
  return {
    name: 'today (LMDB group commit)',
    async oneRfq(shape) {
      await store.transact(() => createInTxn(writes, shape));
      await store.transact(() => fillInTxn(store, writes, shape));
    },
    settle: async () => undefined,
    close: () => store.close(),
  };
}

async function engine(dir: string): Promise<Side> {
  const store = openStore(join(dir, 'lmdb'));
  const answers = new Map<number, (answer: MoneyAnswer) => void>();
  let host: OwnerHost | null = null;
  const writer = new WriteBehind(store, {
    owner: 'owner-0',
    ...READ_MODEL_DEFAULTS,
    onApplied: () => host?.readModelApplied(),
    onCommitFailure: (error) => {
      throw error;
    },
  });
  const opened = OwnerHost.open({
    dir: join(dir, 'owner'),
    self: 0,
    ownerOf: () => 0,
    limits: { lockTimeoutMs: 1_000, lockQueryMs: 2_000, resendMs: 100, resendPerTick: 64 },
    snapshotEveryRecords: 1e9,
    maxPendingBytes: 8 << 20,
    nowMs: () => Date.now(),
    release: (outputs) => {
      for (const output of outputs) if (output.to === 'client') answers.get(output.callId)?.(output.answer);
    },
    onFailure: (error) => {
      throw error;
    },
    readModel: { sink: writer, maxWaitingWrites: 200_000 },
  });
  host = opened;
  let nextCallId = 1;
  const call = (body: MoneyCall, facts: BlindWrite[] = []) =>
    new Promise<void>((resolve, reject) => {
      const callId = nextCallId++;
      answers.set(callId, (answer) => {
        answers.delete(callId);
        if (answer.ok) resolve();
        else reject(new Error(`refused ${answer.code}`));
      });
      if (opened.call(callId, body, facts) === 'overloaded') reject(new Error('overloaded'));
    });
  await Promise.all([
    ...Array.from({ length: USERS }, (_, u) =>
      call({ op: 'credit', account: userAccount(`u${u}`), amountMicros: 10n ** 12n, key: `u${u}` }),
    ),
    ...makerAddresses.map((maker) => call({ op: 'credit', account: makerAccount(maker), amountMicros: 10n ** 15n, key: maker })),
  ]);
  return {
    name: 'engine (owner, journal, read model behind)',
    async oneRfq({ command, created, fill, completed }) {
      const ref = rfqRef(created.requestId);
      await call(
        { op: 'reserve', userId: created.userId, amountMicros: BigInt(created.wagerMicros), ref },
        // As the service's journal engine writes them (rfq/journal-durability.ts): no rfqActive marker.
        createdWrites(created, { key: command.replayKey, contentHash: command.contentHash }, false),
      );
      const filledMicros = BigInt(fill.filledWagerMicros);
      await call(
        { op: 'fill', ref, filledMicros, makerAddress: fill.makerAddress, liabilityMicros: BigInt(fill.payoutMicros) - filledMicros },
        [...fillWrites(completed, fill), ...endedWrites(completed, false)],
      );
    },
    async settle() {
      while (opened.readModelWaitingWrites > 0 || writer.pendingWrites > 0) await writer.flush();
    },
    async close() {
      await opened.close();
      await store.close();
    },
  };
}

interface Run {
  rfqsPerS: number;
  threadCpuUsPerRfq: number;
  processCpuUsPerRfq: number;
  catchUpMs: number;
}

async function run(side: Side, rfqs: number, firstRfq: number): Promise<Run> {
  let next = firstRfq;
  const end = firstRfq + rfqs;
  const thread0 = childMainThreadCpuMs(process.pid);
  const process0 = selfCpuMs();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < end) await side.oneRfq(rfqShape(next++, Date.now()));
    }),
  );
  const wallMs = performance.now() - t0;
  const threadMs = childMainThreadCpuMs(process.pid) - thread0;
  const processMs = selfCpuMs() - process0;
  const t1 = performance.now();
  await side.settle();
  return {
    rfqsPerS: (rfqs * 1000) / wallMs,
    threadCpuUsPerRfq: (threadMs * 1000) / rfqs,
    processCpuUsPerRfq: (processMs * 1000) / rfqs,
    catchUpMs: performance.now() - t1,
  };
}

const isQuick = process.argv.includes('--quick');
const rfqs = isQuick ? 1_000 : 5_000;
const dirs = [mkdtempSync(join(tmpdir(), 'parlayd-pipeline-today-')), mkdtempSync(join(tmpdir(), 'parlayd-pipeline-engine-'))];
// `--only today|engine`: one side (for a profile: --cpu-prof).
const only = process.argv[process.argv.indexOf('--only') + 1];
const sides = [...(only === 'engine' ? [] : [await today(dirs[0]!)]), ...(only === 'today' ? [] : [await engine(dirs[1]!)])];
const runs: Run[][] = [[], []];
let first = 0;
// Alternated: each side's runs spread over the same minutes of this machine's changing speed.
for (let round = 0; round < (isQuick ? 1 : 3); round++) {
  for (const [i, side] of sides.entries()) {
    runs[i]!.push(await run(side, rfqs, first));
    first += rfqs;
  }
}
const median = (values: number[]) => values.slice().sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
console.log("| path | RFQs/s | this thread's CPU µs per RFQ | process CPU µs per RFQ | read model caught up after (ms) |");
console.log('|---|---|---|---|---|');
for (const [i, side] of sides.entries()) {
  const r = runs[i]!;
  const cell = (pick: (run: Run) => number, digits = 0) =>
    `${median(r.map(pick)).toFixed(digits)} (${r.map((x) => pick(x).toFixed(digits)).join(', ')})`;
  console.log(
    `| ${side.name} | ${cell((x) => x.rfqsPerS)} | ${cell((x) => x.threadCpuUsPerRfq)} | ${cell((x) => x.processCpuUsPerRfq)} | ${cell((x) => x.catchUpMs)} |`,
  );
}
for (const side of sides) await side.close();
for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
