// Scenario `handshake`: maker authentications per second against the real service. Each of 32 callers
// loops: open /v1/mm/ws, wait for auth_challenge, sign the 75 bytes (libsecp256k1 when it loads, so the
// client spends little of the shared cores), send auth_response, wait for a successful auth_result (the
// session is durable in LMDB before it is sent), close. Latency is upgrade start -> auth_result.
import WebSocket from 'ws';
import { buildMakerChallenge } from '../../../src/crypto/maker-challenge.js';
import { hexToBytes } from '../../../src/crypto/hex.js';
import { registerMakers } from '../fixtures.js';
import { LatencyHistogram, round1, type LatencySummary } from '../histogram.js';
import { DOMAIN_TAG } from '../makers.js';
import { personalSign, signatureHex, signBackend, type BenchWallet } from '../sign.js';
import { startServerFor, stepMs, type Scenario } from './context.js';

const CONCURRENCY = 32;

export interface HandshakeResult {
  concurrency: number;
  clientSignBackend: 'native' | 'noble';
  seconds: number;
  handshakes: number;
  failures: number;
  handshakesPerS: number;
  latency: LatencySummary;
}

function handshake(wsUrl: string, maker: BenchWallet): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl + '/v1/mm/ws', { perMessageDeflate: false });
    ws.on('error', reject);
    ws.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString()) as {
        type: string;
        nonce?: string;
        timestamp?: number;
        success?: boolean;
        reason?: string;
      };
      if (message.type === 'auth_challenge') {
        const bytes = buildMakerChallenge(DOMAIN_TAG, hexToBytes(message.nonce!)!, message.timestamp!);
        ws.send(
          JSON.stringify({
            type: 'auth_response',
            address: maker.checksumAddress,
            signature: signatureHex(personalSign(maker.privateKey, bytes)),
          }),
        );
      } else if (message.type === 'auth_result') {
        ws.close();
        if (message.success === true) resolve();
        else reject(new Error(`auth refused: ${message.reason}`));
      }
    });
  });
}

export const handshakeScenario: Scenario<HandshakeResult> = {
  name: 'handshake',
  describe: 'maker authentications per second (connect, challenge, sign, verify, durable session, close)',
  async run(ctx) {
    const server = await startServerFor(ctx);
    try {
      const makers = await registerMakers(server, 16);
      for (const maker of makers) await handshake(server.wsUrl, maker); // warm-up
      const latency = new LatencyHistogram();
      let handshakes = 0;
      let failures = 0;
      const startMs = performance.now();
      const endMs = startMs + stepMs(ctx, 5000);
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async (_, i) => {
          const maker = makers[i % makers.length]!;
          while (performance.now() < endMs) {
            const sentMs = performance.now();
            try {
              await handshake(server.wsUrl, maker);
              latency.recordMs(performance.now() - sentMs);
              handshakes++;
            } catch {
              failures++;
            }
          }
        }),
      );
      const seconds = (performance.now() - startMs) / 1000;
      const result: HandshakeResult = {
        concurrency: CONCURRENCY,
        clientSignBackend: signBackend,
        seconds: round1(seconds),
        handshakes,
        failures,
        handshakesPerS: Math.round(handshakes / seconds),
        latency: latency.summary(),
      };
      ctx.log(`handshake: ${result.handshakesPerS}/s (p50 ${result.latency.p50Ms} p99 ${result.latency.p99Ms} ms), ${failures} failures`);
      return result;
    } finally {
      await server.stop();
    }
  },
};
