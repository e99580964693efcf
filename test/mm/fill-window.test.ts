// The maker protection's window of fills (src/mm/fill-window.ts): counts and sums what falls in the window,
// through its growth and wrap-around, and never holds more than its bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FillWindow } from '../../src/mm/fill-window.js';

test('counts and sums the fills after the window start, across growth and wrap-around', () => {
  const window = new FillWindow(1_000);
  const kept: Array<[number, bigint]> = [];
  for (let atMs = 1; atMs <= 500; atMs++) {
    const wager = BigInt(atMs * 1_000_003);
    window.add(atMs, wager, atMs - 100); // a 100 ms window
    kept.push([atMs, wager]);
    const inWindow = kept.filter(([at]) => at > atMs - 100);
    assert.equal(window.count, inWindow.length);
    assert.equal(
      window.wagerSumMicros,
      inWindow.reduce((sum, [, w]) => sum + w, 0n),
    );
  }
  assert.equal(window.count, 100);
});

test('without a window it keeps the newest fills up to its bound', () => {
  const window = new FillWindow(128);
  for (let i = 1; i <= 1_000; i++) window.add(i, BigInt(i), -Infinity);
  assert.equal(window.count, 128);
  let expected = 0n;
  for (let i = 873; i <= 1_000; i++) expected += BigInt(i);
  assert.equal(window.wagerSumMicros, expected);
});
