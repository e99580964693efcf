// The pure decision of a price window (contract section 12), table-driven.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decideWindow, isWindowFinal, priceAt } from '../../src/oracle/decide.js';
import { WindowIndex } from '../../src/oracle/window-index.js';

describe('price at a time', () => {
  const cases: [string, { tsMs: number; priceE8: bigint } | null, number, number, bigint | null][] = [
    ['no report at or before T: missing', null, 1_000, 60_000, null],
    ['a report exactly at T', { tsMs: 1_000, priceE8: 5n }, 1_000, 60_000, 5n],
    ['a report exactly the staleness bound before T still counts', { tsMs: 1_000, priceE8: 5n }, 61_000, 60_000, 5n],
    ['one ms older than the bound is stale', { tsMs: 1_000, priceE8: 5n }, 61_001, 60_000, null],
    ['a bound of 0 takes only a report at T', { tsMs: 999, priceE8: 5n }, 1_000, 0, null],
  ];
  for (const [name, report, atMs, staleMs, expected] of cases) {
    it(name, () => assert.equal(priceAt(report, atMs, staleMs), expected));
  }
});

describe('window decision', () => {
  const cases: [string, bigint | null, bigint | null, string][] = [
    ['end higher than start: YES (up)', 100n, 101n, 'YES'],
    ['end lower than start: NO (down)', 100n, 99n, 'NO'],
    ['equal: VOID', 100n, 100n, 'VOID'],
    ['start price missing or stale: VOID', null, 100n, 'VOID'],
    ['end price missing or stale: VOID', 100n, null, 'VOID'],
  ];
  for (const [name, start, end, outcome] of cases) {
    it(name, () => assert.deepEqual(decideWindow(start, end), { outcome, startPriceE8: start, endPriceE8: end }));
  }

  it('is final once a report at or after the end exists', () => {
    assert.equal(isWindowFinal(2_000, null), false);
    assert.equal(isWindowFinal(2_000, 1_999), false);
    assert.equal(isWindowFinal(2_000, 2_000), true);
    assert.equal(isWindowFinal(2_000, 5_000), true);
  });
});

describe('window index', () => {
  it('gives back the windows ending by a time, oldest end first, once each', () => {
    const index = new WindowIndex();
    for (const [marketId, endMs] of [
      [3, 3_000],
      [1, 1_000],
      [2, 2_000],
      [4, 2_000],
    ] as const) {
      index.add({ marketId, asset: 'BTC', startMs: endMs - 1_000, endMs });
    }
    index.add({ marketId: 9, asset: 'ETH', startMs: 0, endMs: 1_000 });
    index.add({ marketId: 1, asset: 'BTC', startMs: 0, endMs: 1_000 }); // again: a no-op
    assert.deepEqual(
      index.takeEndingBy('BTC', 2_000).map((w) => w.marketId),
      [1, 2, 4],
    );
    assert.deepEqual(index.takeEndingBy('BTC', 2_000), []);
    index.remove(3, 'BTC');
    assert.deepEqual(index.takeEndingBy('BTC', 10_000), []);
    assert.equal(index.size, 1);
  });
});
