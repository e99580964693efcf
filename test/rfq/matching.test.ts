// Pure selection rules of contract section 6, step 4, table-driven.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decide, isAcceptable, type LiveQuote } from '../../src/rfq/matching.js';

let seq = 0;
const quote = (oddsE4: number, maxWagerMicros: bigint, makerId = `m${seq}`): LiveQuote => ({
  makerId,
  makerAddress: `0x${'0'.repeat(40)}`,
  quoteId: `q${seq}`,
  oddsE4,
  maxWagerMicros,
  isLastLook: false,
  seq: seq++,
});
const base = { wagerMicros: 1_000_000n, minOddsE4: 20_000, toleranceBps: 0, orderType: 2 as const };

test('no quote at all is a timeout, not a failure', () => {
  assert.deepEqual(decide({ ...base, quotes: [], quotesReceived: 0 }), { kind: 'timeout' });
});

test('quotes received but all withdrawn is NO_ACCEPTABLE_QUOTE', () => {
  assert.deepEqual(decide({ ...base, quotes: [], quotesReceived: 2 }), { kind: 'fail', reason: 'NO_ACCEPTABLE_QUOTE' });
});

test('odds below the minimum are NO_ACCEPTABLE_QUOTE', () => {
  const decision = decide({ ...base, quotes: [quote(19_999, 5_000_000n)], quotesReceived: 1 });
  assert.deepEqual(decision, { kind: 'fail', reason: 'NO_ACCEPTABLE_QUOTE' });
});

test('FOK with no quote large enough is INSUFFICIENT_LIQUIDITY', () => {
  const decision = decide({ ...base, quotes: [quote(25_000, 999_999n)], quotesReceived: 1 });
  assert.deepEqual(decision, { kind: 'fail', reason: 'INSUFFICIENT_LIQUIDITY' });
});

test('FOK takes the best odds among quotes that can take the whole wager', () => {
  const small = quote(30_000, 500_000n);
  const good = quote(25_000, 1_000_000n);
  const worse = quote(21_000, 9_000_000n);
  const decision = decide({ ...base, quotes: [small, worse, good], quotesReceived: 3 });
  assert.equal(decision.kind, 'fill');
  if (decision.kind !== 'fill') return;
  assert.deepEqual(
    decision.candidates.map((c) => [c.quote.quoteId, c.fillWagerMicros]),
    [
      [good.quoteId, 1_000_000n],
      [worse.quoteId, 1_000_000n],
    ],
  );
});

test('IOC fills min(wager, max_wager) of the best quote and keeps the rest as fallbacks', () => {
  const best = quote(30_000, 400_000n);
  const next = quote(22_000, 5_000_000n);
  const decision = decide({ ...base, orderType: 1, quotes: [next, best], quotesReceived: 2 });
  assert.equal(decision.kind, 'fill');
  if (decision.kind !== 'fill') return;
  assert.deepEqual(
    decision.candidates.map((c) => [c.quote.quoteId, c.fillWagerMicros]),
    [
      [best.quoteId, 400_000n],
      [next.quoteId, 1_000_000n],
    ],
  );
});

test('equal odds go to the earlier quote', () => {
  const first = quote(25_000, 2_000_000n);
  const second = quote(25_000, 2_000_000n);
  const decision = decide({ ...base, quotes: [second, first], quotesReceived: 2 });
  assert.equal(decision.kind === 'fill' && decision.candidates[0]!.quote.quoteId, first.quoteId);
});

test('tolerance lowers the effective minimum exactly, without rounding', () => {
  // min 2.0000 with normal tolerance (50 bps): the effective minimum is 1.99 exactly.
  assert.equal(isAcceptable(19_900, 20_000, 50), true);
  assert.equal(isAcceptable(19_899, 20_000, 50), false);
  // lenient (200 bps) on 1.15: 1.127 exactly.
  assert.equal(isAcceptable(11_270, 11_500, 200), true);
  assert.equal(isAcceptable(11_269, 11_500, 200), false);
  // strict: the minimum itself.
  assert.equal(isAcceptable(11_500, 11_500, 0), true);
  assert.equal(isAcceptable(11_499, 11_500, 0), false);
});
