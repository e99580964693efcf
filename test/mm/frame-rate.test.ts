// Pure: the token bucket of a maker socket's inbound frames (src/mm/frame-rate.ts), on time given by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fillBucket, takeFrameToken, type FrameBucket } from '../../src/mm/frame-rate.js';

const T0 = 1_800_000_000_000;
const RATE = { perMs: 10 / 1000, burst: 3 }; // 10 frames/s, bursts of 3

function takes(bucket: FrameBucket, atMs: number[]): boolean[] {
  return atMs.map((nowMs) => takeFrameToken(bucket, RATE, nowMs));
}

test('a new socket has its whole burst, then one frame per 1/rate', () => {
  const bucket: FrameBucket = { frameTokens: 0, frameTokensAtMs: 0 };
  fillBucket(bucket, RATE, T0);
  assert.deepEqual(takes(bucket, [T0, T0, T0, T0, T0 + 99, T0 + 100, T0 + 100]), [true, true, true, false, false, true, false]);
});

test('a pause refills the bucket to the burst, never past it', () => {
  const bucket: FrameBucket = { frameTokens: 0, frameTokensAtMs: 0 };
  fillBucket(bucket, RATE, T0);
  takes(bucket, [T0, T0, T0]);
  assert.deepEqual(takes(bucket, [T0 + 60_000, T0 + 60_000, T0 + 60_000, T0 + 60_000]), [true, true, true, false]);
});

test('refused frames spend nothing: a socket over its rate gets the next token on time', () => {
  const bucket: FrameBucket = { frameTokens: 0, frameTokensAtMs: 0 };
  fillBucket(bucket, RATE, T0);
  takes(bucket, [T0, T0, T0]);
  assert.deepEqual(takes(bucket, [T0 + 10, T0 + 50, T0 + 90, T0 + 100]), [false, false, false, true]);
});
