// `npm run bench:micro [-- --quick]`: tinybench over each stage of the hot paths, one table of ops/s and
// p99 (µs), also written to bench/results/micro.json. The recovery figures here are the denominators of the `signed`
// load scenario's target (bench/load), so both must come from the same run of the same machine.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Bench } from 'tinybench';
import { Wallet } from 'ethers';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { decodeOrder, encodeOrder, type SignableOrder } from '../../src/contract/order-codec.js';
import { personalMessageHash } from '../../src/crypto/eip191.js';
import { recoverAddressNative, recoverAddressNoble, recoverBackend } from '../../src/crypto/recover.js';
import { parseSignatureBase64 } from '../../src/crypto/signature.js';
import { SignedRfqRequest } from '../../src/contract/rfq.js';
import { openStore } from '../../src/store/db.js';
import { toRfqResult, type RfqRecord } from '../../src/records/rfqs.js';
import { addMakerFrameStages } from './maker-frames.js';
import { repoRoot } from '../../test/helpers/paths.js';
import { benchRows } from './rows.js';

async function main(): Promise<void> {
  const wallet = Wallet.createRandom();
  const order: SignableOrder = {
    user: wallet.address.toLowerCase(),
    wagerMicros: 5_000_000,
    minOddsE4: 11_500,
    nonce: 42,
    expiresAtMs: Date.now() + 60_000,
    orderType: 2,
    shieldOn: false,
    legs: Array.from({ length: 8 }, (_, i) => ({ marketId: 1000 + i, direction: i % 2 === 0 ? ('up' as const) : ('down' as const) })),
  };
  const bytes = encodeOrder(order);
  const signatureB64 = Buffer.from((await wallet.signMessage(bytes)).slice(2), 'hex').toString('base64');
  const sig65 = parseSignatureBase64(signatureB64)!;
  const hash = personalMessageHash(bytes);
  const requestBody = {
    order: {
      user: wallet.address,
      wager_micros: order.wagerMicros,
      min_odds: 1.15,
      legs: order.legs.map((l) => ({ market_id: l.marketId, direction: l.direction })),
      nonce: order.nonce,
      expires_at_ms: order.expiresAtMs,
      order_type: 2,
      shield_on: false,
      signature: signatureB64,
    },
  };
  const requestText = JSON.stringify(requestBody);
  const orderCheck = TypeCompiler.Compile(SignedRfqRequest);
  const record: RfqRecord = {
    requestId: '00c0ffee-0000-4000-8000-000000000000',
    userId: 'u',
    wallet: order.user,
    kind: 'signed',
    legs: order.legs.map((l) => ({ ...l })),
    wagerMicros: '5000000',
    minOddsE4: 11_500,
    toleranceBps: 0,
    orderType: 2,
    isShielded: false,
    createdAtMs: Date.now(),
    expiresAtMs: order.expiresAtMs,
    status: 'completed',
    quotesReceived: 10,
    fill: { makerAddress: order.user, quoteId: 'q', oddsE4: 25_000, filledWagerMicros: '5000000', payoutMicros: '12500000' },
    error: null,
    terminalAtMs: Date.now(),
  };

  const dataDir = mkdtempSync(join(tmpdir(), 'parlayd-bench-'));
  const store = openStore(dataDir);
  const rfqs = store.db<RfqRecord>('rfqs');
  await rfqs.put(record.requestId, record);
  let putSeq = 0;
  // The shards' write path (store/group-commit.ts), in a second environment: a lone transaction per group.
  const groupDataDir = mkdtempSync(join(tmpdir(), 'parlayd-bench-'));
  const groupStore = openStore(groupDataDir, { isGroupCommit: true });
  const groupRfqs = groupStore.db<RfqRecord>('rfqs');

  const echo = new Worker(new URL('./echo-worker.js', import.meta.url));
  let pendingEcho: (() => void) | null = null;
  echo.on('message', () => pendingEcho?.());

  // --quick (bench:load --quick runs this as a smoke check): a fraction of the time, figures not meaningful.
  const isQuick = process.argv.includes('--quick');
  const bench = new Bench({ time: isQuick ? 150 : 1000, warmupIterations: isQuick ? 5 : 50 });
  bench
    .add('order encode (8 legs)', () => void encodeOrder(order))
    .add('order decode (8 legs)', () => void decodeOrder(bytes))
    .add('typebox validate signed order', () => void orderCheck.Check(JSON.parse(requestText)))
    .add('keccak256 (123 B)', () => void keccak_256(bytes))
    .add(`recover noble`, () => void recoverAddressNoble(hash, sig65));
  if (recoverAddressNative !== null) {
    const native = recoverAddressNative;
    bench.add('recover native', () => void native(hash, sig65));
  }
  bench
    .add(
      'worker round trip (batch of 1)',
      () =>
        new Promise<void>((done) => {
          pendingEcho = done;
          echo.postMessage([{ kind: 'ping' }]);
        }),
    )
    .add('LMDB put, durable (store.transact)', () => store.transact(() => void rfqs.put(`bench:${putSeq++}`, record)))
    .add('LMDB put, durable (shard group commit)', () => groupStore.transact(() => void groupRfqs.put(`bench:${putSeq++}`, record)))
    .add('LMDB get', () => void rfqs.get(record.requestId))
    .add('JSON RFQ result serialize', () => void JSON.stringify(toRfqResult(record)));
  // The main thread's share of a maker's frames (bench/micro/maker-frames.ts has the before and after).
  const makerFrames = addMakerFrameStages(bench, 'now');
  await bench.run();
  makerFrames.checkRan();

  const rows = benchRows(bench);
  const cores = availableParallelism();
  const recoverRow = rows.find((r) => r.stage === (recoverBackend === 'native' ? 'recover native' : 'recover noble'))!;
  const summary = {
    when: new Date().toISOString(),
    node: process.version,
    cores,
    recoverBackend,
    // What the machine's cores could recover if every core did nothing else: the `signed` target's base.
    recoveriesPerSAllCores: recoverRow.opsPerS * cores,
    rows,
  };
  console.table(rows);
  console.log(`recover backend: ${recoverBackend}; ${cores} cores → ceiling ${summary.recoveriesPerSAllCores} recoveries/s`);
  const outDir = resolve(repoRoot, 'bench/results');
  mkdirSync(outDir, { recursive: true });
  // Same envelope as bench:load's per-scenario files; bench:load runs this as its `micro` scenario and
  // passes its run id, so the recovery denominator of `signed` is traceable to the run it came from.
  const file = { scenario: 'micro', runId: process.env['BENCH_RUN_ID'] ?? null, when: summary.when, isQuick, result: summary };
  writeFileSync(join(outDir, 'micro.json'), JSON.stringify(file, null, 2) + '\n');
  await echo.terminate();
  await store.close();
  await groupStore.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(groupDataDir, { recursive: true, force: true });
}

await main();
