// The dashboard's arithmetic (src/dashboard/frame.ts): percentiles from histogram buckets as Prometheus's
// histogram_quantile computes them, rates from counters, absent metrics as null, and a cluster's readings added up.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deriveFrame, quantileBetween } from '../../src/dashboard/frame.js';
import { mergeSamples, type Sample, type SeriesValue } from '../../src/dashboard/sample.js';

const buckets = (counts: Array<[number, number]>) => counts.map(([le, count]) => ({ le, count }));

describe('quantileBetween', () => {
  const before = buckets([
    [0.1, 10],
    [0.25, 10],
    [0.5, 10],
    [Infinity, 10],
  ]);
  const cases: Array<{ name: string; after: Array<[number, number]>; q: number; want: number | null }> = [
    {
      name: 'nothing observed in between is null',
      after: [
        [0.1, 10],
        [0.25, 10],
        [0.5, 10],
        [Infinity, 10],
      ],
      q: 0.5,
      want: null,
    },
    {
      name: 'all in one bucket: interpolated inside it',
      after: [
        [0.1, 10],
        [0.25, 20],
        [0.5, 20],
        [Infinity, 20],
      ],
      q: 0.5,
      want: 0.175,
    },
    {
      name: 'p99 across two buckets',
      after: [
        [0.1, 60],
        [0.25, 110],
        [0.5, 110],
        [Infinity, 110],
      ],
      q: 0.99,
      want: 0.1 + (0.15 * (99 - 50)) / 50,
    },
    {
      name: 'in the +Inf bucket: the highest finite bound',
      after: [
        [0.1, 10],
        [0.25, 10],
        [0.5, 10],
        [Infinity, 20],
      ],
      q: 0.5,
      want: 0.5,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = quantileBetween(before, buckets(c.after), c.q);
      if (c.want === null) assert.equal(got, null);
      else assert.ok(got !== null && Math.abs(got - c.want) < 1e-9, `${got} != ${c.want}`);
    });
  }
});

describe('deriveFrame', () => {
  const sample = (atMs: number, metrics: Record<string, SeriesValue[]>): Sample => ({ atMs, metrics: new Map(Object.entries(metrics)) });
  const line = (name: string, value: number, labels: Record<string, string> = {}): SeriesValue => ({ name, labels, value });

  it('rates are counter increases per second; a counter that went down counts from zero', () => {
    const prev = sample(1_000, {
      parlayd_rfq_created_total: [line('parlayd_rfq_created_total', 10, { kind: 'unsigned' })],
      parlayd_rfq_terminal_total: [line('parlayd_rfq_terminal_total', 4, { status: 'completed', error: '' })],
    });
    const curr = sample(3_000, {
      parlayd_rfq_created_total: [line('parlayd_rfq_created_total', 30, { kind: 'unsigned' })],
      parlayd_rfq_terminal_total: [
        line('parlayd_rfq_terminal_total', 2, { status: 'completed', error: '' }),
        line('parlayd_rfq_terminal_total', 6, { status: 'failed', error: 'MAKER_REJECTED' }),
      ],
    });
    const frame = deriveFrame(prev, curr);
    assert.deepEqual(frame.rfqPerS, { created: 10, completed: 1, failed: 3, timeout: 0, cancelled: 0 });
    assert.deepEqual(frame.rfqTotals, { created: 30, ended: 8 });
  });

  it('metrics that are not registered are null, not 0', () => {
    const frame = deriveFrame(sample(0, {}), sample(1_000, {}));
    assert.equal(frame.activeRfqs, null);
    assert.equal(frame.marketsDue, null);
    assert.deepEqual(frame.latencyMs, { p50: null, p99: null });
    assert.deepEqual(frame.money, { lockedCollateralMicros: null, openInterestMicros: null, ledgerCheckOk: null, ledgerCheckAtMs: null });
  });

  it('the money gauges are shown as they are, each joined from its two exact parts into a decimal string', () => {
    const frame = deriveFrame(
      sample(0, {}),
      sample(1_000, {
        parlayd_maker_locked_usdc: [line('parlayd_maker_locked_usdc', 5)],
        parlayd_maker_locked_fraction_micros: [line('parlayd_maker_locked_fraction_micros', 1)],
        // 2^54 + 2 micros: a number would round it to 2^54.
        parlayd_open_interest_usdc: [line('parlayd_open_interest_usdc', 18_014_398_509)],
        parlayd_open_interest_fraction_micros: [line('parlayd_open_interest_fraction_micros', 481_986)],
        parlayd_ledger_check_ok: [line('parlayd_ledger_check_ok', 0)],
        parlayd_ledger_check_at_ms: [line('parlayd_ledger_check_at_ms', 123)],
      }),
    );
    assert.deepEqual(frame.money, {
      lockedCollateralMicros: '5000001',
      openInterestMicros: '18014398509481986',
      ledgerCheckOk: false,
      ledgerCheckAtMs: 123,
    });
  });

  it('a money figure with a part missing or not whole (NaN: past 2^53 USDC) is absent, never a wrong number', () => {
    const frame = deriveFrame(
      sample(0, {}),
      sample(1_000, {
        parlayd_maker_locked_usdc: [line('parlayd_maker_locked_usdc', Number.NaN)],
        parlayd_maker_locked_fraction_micros: [line('parlayd_maker_locked_fraction_micros', 0)],
        parlayd_open_interest_usdc: [line('parlayd_open_interest_usdc', 7)],
        parlayd_ledger_check_ok: [line('parlayd_ledger_check_ok', 1)],
        parlayd_ledger_check_at_ms: [line('parlayd_ledger_check_at_ms', 123)],
      }),
    );
    assert.deepEqual([frame.money.lockedCollateralMicros, frame.money.openInterestMicros], [null, null]);
  });

  it('before the first ledger check (its time still 0) the check and the open interest it sums are absent', () => {
    const frame = deriveFrame(
      sample(0, {}),
      sample(1_000, {
        parlayd_maker_locked_usdc: [line('parlayd_maker_locked_usdc', 5)],
        parlayd_maker_locked_fraction_micros: [line('parlayd_maker_locked_fraction_micros', 0)],
        parlayd_open_interest_usdc: [line('parlayd_open_interest_usdc', 0)],
        parlayd_open_interest_fraction_micros: [line('parlayd_open_interest_fraction_micros', 0)],
        parlayd_ledger_check_ok: [line('parlayd_ledger_check_ok', 0)],
        parlayd_ledger_check_at_ms: [line('parlayd_ledger_check_at_ms', 0)],
      }),
    );
    assert.deepEqual(frame.money, {
      lockedCollateralMicros: '5000000',
      openInterestMicros: null,
      ledgerCheckOk: null,
      ledgerCheckAtMs: null,
    });
  });

  it('makers: quote rate over the interval, hit rate = fills / quotes, last-look answers', () => {
    const maker = '0x' + 'ab'.repeat(20);
    const prev = sample(0, { parlayd_mm_quotes_total: [line('parlayd_mm_quotes_total', 10, { maker })] });
    const curr = sample(2_000, {
      parlayd_mm_maker_connections: [line('parlayd_mm_maker_connections', 1, { maker, name: 'alpha' })],
      parlayd_mm_quotes_total: [line('parlayd_mm_quotes_total', 20, { maker })],
      parlayd_mm_fills_total: [line('parlayd_mm_fills_total', 5, { maker })],
      parlayd_mm_last_look_total: [
        line('parlayd_mm_last_look_total', 3, { maker, answer: 'accepted' }),
        line('parlayd_mm_last_look_total', 2, { maker, answer: 'rejected' }),
      ],
    });
    assert.deepEqual(deriveFrame(prev, curr).makers, [
      {
        maker,
        name: 'alpha',
        connections: 1,
        quotesPerS: 5,
        quotes: 20,
        fills: 5,
        hitRate: 0.25,
        lastLookAccepted: 3,
        lastLookRejected: 2,
      },
    ]);
  });
});

describe('mergeSamples (a cluster: every front process read, added up)', () => {
  const sample = (atMs: number, metrics: Record<string, SeriesValue[]>): Sample => ({ atMs, metrics: new Map(Object.entries(metrics)) });
  const line = (name: string, value: number, labels: Record<string, string | number> = {}): SeriesValue => ({ name, labels, value });

  it('adds counters, buckets and gauges line by line (labels in any order), averages utilization, keeps the worst check', () => {
    const gateway = sample(1_000, {
      parlayd_rfq_created_total: [line('parlayd_rfq_created_total', 7, { kind: 'unsigned' })],
      parlayd_rfq_quotes_per_rfq: [line('parlayd_rfq_quotes_per_rfq_bucket', 3, { le: 1 }), line('parlayd_rfq_quotes_per_rfq_count', 3)],
      parlayd_mm_maker_connections: [line('parlayd_mm_maker_connections', 2, { maker: '0xa', name: 'a' })],
      parlayd_verify_pool_utilization: [line('parlayd_verify_pool_utilization', 0.5)],
    });
    const coordinator = sample(1_010, {
      parlayd_rfq_created_total: [
        line('parlayd_rfq_created_total', 1, { kind: 'unsigned' }),
        line('parlayd_rfq_created_total', 4, { kind: 'signed' }),
      ],
      parlayd_rfq_quotes_per_rfq: [line('parlayd_rfq_quotes_per_rfq_bucket', 1, { le: 1 }), line('parlayd_rfq_quotes_per_rfq_count', 1)],
      parlayd_mm_maker_connections: [line('parlayd_mm_maker_connections', 1, { name: 'a', maker: '0xa' })],
      parlayd_verify_pool_utilization: [line('parlayd_verify_pool_utilization', 0.1)],
      parlayd_ledger_check_ok: [line('parlayd_ledger_check_ok', 1)],
      parlayd_ledger_check_at_ms: [line('parlayd_ledger_check_at_ms', 900)],
    });
    const other = sample(990, {
      parlayd_ledger_check_ok: [line('parlayd_ledger_check_ok', 0)],
      parlayd_ledger_check_at_ms: [line('parlayd_ledger_check_at_ms', 950)],
    });
    const merged = mergeSamples([gateway, coordinator, other], 2_000);
    assert.equal(merged.atMs, 2_000);
    const values = (name: Parameters<typeof merged.metrics.get>[0]) => merged.metrics.get(name)?.map((l) => [l.name, l.labels, l.value]);
    assert.deepEqual(values('parlayd_rfq_created_total'), [
      ['parlayd_rfq_created_total', { kind: 'unsigned' }, 8],
      ['parlayd_rfq_created_total', { kind: 'signed' }, 4],
    ]);
    assert.deepEqual(values('parlayd_rfq_quotes_per_rfq'), [
      ['parlayd_rfq_quotes_per_rfq_bucket', { le: 1 }, 4],
      ['parlayd_rfq_quotes_per_rfq_count', {}, 4],
    ]);
    assert.deepEqual(values('parlayd_mm_maker_connections'), [['parlayd_mm_maker_connections', { maker: '0xa', name: 'a' }, 3]]);
    assert.deepEqual(values('parlayd_verify_pool_utilization'), [['parlayd_verify_pool_utilization', {}, 0.3]]);
    assert.deepEqual(values('parlayd_ledger_check_ok'), [['parlayd_ledger_check_ok', {}, 0]]);
    assert.deepEqual(values('parlayd_ledger_check_at_ms'), [['parlayd_ledger_check_at_ms', {}, 950]]);
    assert.equal(merged.metrics.has('parlayd_markets_due'), false, 'registered nowhere: absent, so the frame shows none');
    assert.equal(deriveFrame(mergeSamples([gateway], 1_000), merged, 3).processes, 3);
  });

  it("money's two exact parts add up past a whole USDC of fractions", () => {
    const money = (usdc: number, fraction: number) =>
      sample(0, {
        parlayd_maker_locked_usdc: [line('parlayd_maker_locked_usdc', usdc)],
        parlayd_maker_locked_fraction_micros: [line('parlayd_maker_locked_fraction_micros', fraction)],
      });
    const merged = mergeSamples([money(3, 900_000), money(2, 600_000)], 1_000);
    assert.equal(deriveFrame(merged, merged).money.lockedCollateralMicros, '6500000');
  });
});
