// Main thread. Reads a request body from uWebSockets.js with a hard byte limit. uWS hands out chunks whose
// memory is reused after the callback, so each chunk is copied; the limit is checked before copying, so an
// oversized body never costs more than the limit in memory.
import type { HttpResponse } from 'uWebSockets.js';

export type BodyOutcome = { kind: 'ok'; bytes: Buffer } | { kind: 'too-large' };

export function readBody(res: HttpResponse, limitBytes: number, done: (outcome: BodyOutcome) => void): void {
  const chunks: Buffer[] = [];
  let receivedBytes = 0;
  let isSettled = false;
  res.onData((chunk, isLast) => {
    if (isSettled) return;
    receivedBytes += chunk.byteLength;
    if (receivedBytes > limitBytes) {
      isSettled = true;
      done({ kind: 'too-large' });
      return;
    }
    // Buffer.from copies a small view into Node's shared pool: no ArrayBuffer of its own per request, which
    // every young-generation collection would have to sweep (docs/performance.md, "Allocation shapes").
    if (chunk.byteLength > 0) chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (isLast) {
      isSettled = true;
      done({ kind: 'ok', bytes: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, receivedBytes) });
    }
  });
}
