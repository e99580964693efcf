// `node dist/bench/load/handshake.js [--seconds 10] [--concurrency 32] [--makers 16] [--verify-threads N]`
// Maker handshakes per second against the real service (a child process, as users run it): each loop opens
// /v1/mm/ws, waits for auth_challenge, signs the 75 bytes, sends auth_response, waits for auth_result (the
// session is durable in LMDB before it is sent) and closes. Prints handshakes/s and the latency of
// upgrade-start -> auth_result, and writes bench/results/handshake-standalone.json (the load suite's handshake scenario owns handshake.json).
//
// Client signing uses libsecp256k1 when its addon loads (else noble), so the load generator spends as little
// of the machine's CPU as it can: on a small machine client and server share the cores.
import { createRequire } from 'node:module';
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Wallet } from 'ethers';
import WebSocket from 'ws';
import { personalMessageHash } from '../../src/crypto/eip191.js';
import { DEV_DOMAIN_TAG } from '../../src/crypto/maker-challenge.js';
import { bytesToHex, hexToBytes } from '../../src/crypto/hex.js';
import { makerChallengeBytes, privateKeySigner } from '../../src/sdk/signer.js';
import type { AuthChallengeMessage, ServerToMakerMessage } from '../../src/contract/mm.js';
import { repoRoot } from '../../test/helpers/paths.js';
import { removeDataDir, startServer } from '../../test/helpers/server.js';

const DOMAIN_TAG = DEV_DOMAIN_TAG;

interface NativeSign {
  ecdsaSign(msg32: Uint8Array, key: Uint8Array): { signature: Uint8Array; recid: number };
}

function makeSigner(privateKey: string): (bytes: Uint8Array) => string {
  try {
    const native = createRequire(import.meta.url)('secp256k1/bindings') as NativeSign;
    const key = hexToBytes(privateKey)!;
    return (bytes) => {
      const { signature, recid } = native.ecdsaSign(personalMessageHash(bytes), key);
      return '0x' + bytesToHex(signature) + (27 + recid).toString(16);
    };
  } catch {
    const signer = privateKeySigner(privateKey);
    return (bytes) => String(signer.signMessage(bytes));
  }
}

/** One handshake; resolves with its latency in ms, rejects on anything but success. */
function handshake(wsUrl: string, address: string, sign: (b: Uint8Array) => string): Promise<number> {
  const startNs = process.hrtime.bigint();
  return new Promise((resolveHandshake, reject) => {
    const ws = new WebSocket(wsUrl + '/v1/mm/ws');
    ws.on('error', reject);
    ws.on('message', (data) => {
      const message = JSON.parse(data.toString()) as ServerToMakerMessage;
      if (message.type === 'auth_challenge') {
        const signature = sign(makerChallengeBytes(message as AuthChallengeMessage, DOMAIN_TAG));
        ws.send(JSON.stringify({ type: 'auth_response', address, signature }));
      } else if (message.type === 'auth_result') {
        const latencyMs = Number(process.hrtime.bigint() - startNs) / 1e6;
        ws.close();
        if (message.success) resolveHandshake(latencyMs);
        else reject(new Error(`auth refused: ${message.reason}`));
      }
    });
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '10' },
      concurrency: { type: 'string', default: '32' },
      makers: { type: 'string', default: '16' },
      'verify-threads': { type: 'string', default: String(Math.max(1, availableParallelism() - 1)) },
    },
  });
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const makerCount = Number(values.makers);
  const server = await startServer({
    // Log level info, as deployed (and startServer reads the port from the 'listening' line).
    env: { PARLAYD_VERIFY_THREADS: values['verify-threads'], PARLAYD_LOG_LEVEL: 'info' },
  });
  try {
    const makers = await Promise.all(
      Array.from({ length: makerCount }, async () => {
        const wallet = Wallet.createRandom();
        const res = await fetch(server.baseUrl + '/v1/admin/market-makers', {
          method: 'POST',
          headers: { authorization: `Bearer ${server.adminToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ address: wallet.address, name: 'bench' }),
        });
        if (res.status !== 201) throw new Error(`register: HTTP ${res.status}`);
        return { address: wallet.address, sign: makeSigner(wallet.privateKey) };
      }),
    );
    // Warm-up: JIT, worker threads, LMDB pages.
    for (const m of makers) await handshake(server.wsUrl, m.address, m.sign);

    const latencies: number[] = [];
    let failures = 0;
    const startMs = Date.now();
    const endMs = startMs + seconds * 1000;
    await Promise.all(
      Array.from({ length: concurrency }, async (_, i) => {
        const maker = makers[i % makers.length]!;
        while (Date.now() < endMs) {
          try {
            latencies.push(await handshake(server.wsUrl, maker.address, maker.sign));
          } catch {
            failures++;
          }
        }
      }),
    );
    const elapsedS = (Date.now() - startMs) / 1000;
    latencies.sort((a, b) => a - b);
    const summary = {
      when: new Date().toISOString(),
      node: process.version,
      cores: availableParallelism(),
      verifyThreads: Number(values['verify-threads']),
      concurrency,
      makers: makerCount,
      seconds: Math.round(elapsedS * 100) / 100,
      handshakes: latencies.length,
      failures,
      handshakesPerS: Math.round(latencies.length / elapsedS),
      latencyMs: {
        p50: round2(percentile(latencies, 50)),
        p90: round2(percentile(latencies, 90)),
        p99: round2(percentile(latencies, 99)),
        max: round2(latencies.at(-1) ?? NaN),
      },
    };
    console.log(JSON.stringify(summary, null, 2));
    const outDir = resolve(repoRoot, 'bench/results');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'handshake-standalone.json'), JSON.stringify(summary, null, 2) + '\n');
  } finally {
    await server.stop();
    removeDataDir(server);
  }
}

const round2 = (x: number) => Math.round(x * 100) / 100;

await main();
