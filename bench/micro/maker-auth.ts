// `node dist/bench/micro/maker-auth.js`: the CPU stages of a maker handshake and of a maker message, one
// table of ops/s and p50/p99 (µs), also written to bench/results/maker-auth.json. The headline is signer
// recovery of the 75-byte challenge, native (libsecp256k1) against noble, on this thread and through the
// verify pool the gateway uses (piscina, one task at a time and 64 in flight).
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { Bench } from 'tinybench';
import { personalMessageHash } from '../../src/crypto/eip191.js';
import { recoverAddressNative, recoverAddressNoble, recoverBackend } from '../../src/crypto/recover.js';
import { parseSignatureHex } from '../../src/crypto/signature.js';
import { VerifyPool } from '../../src/crypto/verify-pool.js';
import { challengeMessage, checkAuthResponse, createChallenge } from '../../src/mm/handshake.js';
import { decodeFrame, validateMakerMessage } from '../../src/mm/inbound.js';
import { makerChallengeBytes, privateKeySigner } from '../../src/sdk/signer.js';
import { repoRoot } from '../../test/helpers/paths.js';
import { benchRows } from './rows.js';

const DOMAIN_TAG = 'parlayd:mm:ws-auth:v1:localhost.dev';
const POOL_BATCH = 64;

async function main(): Promise<void> {
  const signer = privateKeySigner('0x' + '11'.repeat(32));
  const challenge = createChallenge(DOMAIN_TAG, Date.now(), 30_000);
  const bytes = makerChallengeBytes(challengeMessage(challenge), DOMAIN_TAG);
  const signatureHex = String(signer.signMessage(bytes));
  const sig65 = parseSignatureHex(signatureHex)!;
  const hash = personalMessageHash(bytes);
  const response = { type: 'auth_response', address: signer.address, signature: signatureHex };
  const quoteFrame = new TextEncoder().encode(
    JSON.stringify({
      type: 'quote',
      request_id: '3f1c2a9e-8b7d-4c6a-9e2f-1a2b3c4d5e6f',
      quote_id: 'q-1',
      odds: 1.85,
      max_wager_micros: '100000000',
    }),
  ).buffer;
  const rfq = {
    type: 'rfq',
    request_id: '3f1c2a9e-8b7d-4c6a-9e2f-1a2b3c4d5e6f',
    legs: Array.from({ length: 8 }, (_, i) => ({ market_id: 1000 + i, direction: i % 2 === 0 ? 'up' : 'down' })),
    wager_micros: '5000000',
    order_type: 2,
    quote_deadline_ms: Date.now() + 300,
    expires_at_ms: Date.now() + 5000,
    taker: null,
  };
  const threads = Math.max(1, availableParallelism() - 1);
  const pool = new VerifyPool({ threads });
  await pool.recoverPersonalSigner(bytes, sig65); // workers warm

  const bench = new Bench({ time: 1500, warmupIterations: 50 });
  bench
    .add('challenge: 32 random bytes + 75-byte message', () => void createChallenge(DOMAIN_TAG, Date.now(), 30_000))
    .add('auth_response shape checks (schema, EIP-55, hex)', () => void checkAuthResponse(challenge, response, Date.now()))
    .add('EIP-191 hash of 75 bytes', () => void personalMessageHash(bytes))
    .add('recover noble (hash given)', () => void recoverAddressNoble(hash, sig65));
  if (recoverAddressNative !== null) {
    const native = recoverAddressNative;
    bench.add('recover native (hash given)', () => void native(hash, sig65));
  }
  bench
    .add('verify pool: one recovery round trip', async () => void (await pool.recoverPersonalSigner(bytes, sig65)))
    .add(`verify pool: ${POOL_BATCH} recoveries in flight (per batch)`, async () => {
      const all: Promise<unknown>[] = [];
      for (let i = 0; i < POOL_BATCH; i++) all.push(pool.recoverPersonalSigner(bytes, sig65));
      await Promise.all(all);
    })
    .add('maker sign (SDK, noble)', () => void signer.signMessage(bytes))
    .add('inbound quote: decode + validate', () => void validateMakerMessage(decodeFrame(quoteFrame, false)!))
    .add('rfq JSON serialize (8 legs)', () => void JSON.stringify(rfq));
  await bench.run();

  const rows = benchRows(bench);
  const batchRow = rows.find((r) => r.stage.startsWith(`verify pool: ${POOL_BATCH}`))!;
  const summary = {
    when: new Date().toISOString(),
    node: process.version,
    cores: availableParallelism(),
    verifyThreads: threads,
    recoverBackend,
    poolRecoveriesPerS: batchRow.opsPerS * POOL_BATCH,
    rows,
  };
  console.table(rows);
  console.log(
    `backend ${recoverBackend}; verify pool of ${threads} thread(s): ${summary.poolRecoveriesPerS} recoveries/s with ${POOL_BATCH} in flight`,
  );
  const outDir = resolve(repoRoot, 'bench/results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, 'maker-auth.json'), JSON.stringify(summary, null, 2) + '\n');
  await pool.close();
}

await main();
