// Main thread. Runs the ledger check (check.ts) on a worker thread of its own (check-worker.ts) and keeps its
// last result for /metrics and the dashboard: whether it was ok, when, and the open interest it summed. One
// check at a time. A check in flight read its snapshot before a caller asking now, so its answer could miss
// what that caller just wrote (contract section 13: the ledger check shows the caller's own writes): callers
// who ask meanwhile share the next check, which starts when the running one ends.
//
// With several shards on the journal engine, a snapshot can also catch a hold on one shard whose record is on
// another mid-way: a maker's lock granted before its fill is in LMDB, or still held after the fill's
// settlement, before the settlement's message reached the maker's shard; a contest's pool before a stake
// that is on its way. (A transfer's halves are counted exactly, check.ts.) So a difference is reported only
// if it is still there in a second snapshot taken once everything on its way at the first has landed
// (`settleBetweenShards`), and again in each later one, up to RECHECKS: whatever the shards were doing
// moves on by then, and what a bug left stays.
//
// Money in /metrics: a prom-client gauge holds a double, exact only up to 2^53, and 2^53 micros is only ~9
// billion USDC. So each money figure is two gauges, `<name>_usdc` (whole USDC) and `<name>_fraction_micros`
// (the micros under one USDC), both exact up to 2^53 USDC; the dashboard joins them back into a decimal
// string of micros (dashboard/frame.ts), and Prometheus computes `_usdc + _fraction_micros / 1e6`.
import { Worker } from 'node:worker_threads';
import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '../lib/clock.js';
import { overloadedAfter } from '../lib/errors.js';
import type { Store } from '../store/db.js';
import { makerAccount } from '../records/ledger.js';
import { readAccount } from './ledger.js';
import type { LedgerCheck, LedgerDifference } from './check.js';

export class LedgerCheckRunner {
  #running: Promise<LedgerCheck> | null = null;
  /** The check for those who asked while one ran: after it, once. */
  #next: Promise<LedgerCheck> | null = null;
  readonly #ok: Gauge;
  readonly #atMs: Gauge;
  readonly #openInterest: MoneyGauge;

  constructor(
    private readonly dataDir: string,
    private readonly mapSizeBytes: number | undefined,
    private readonly clock: Clock,
    store: Store,
    /** Registered makers' addresses: the locked collateral is summed over them when /metrics is read. */
    makerAddresses: () => Iterable<string>,
    registry: Registry,
    /** Resolves once what the shards had on its way between them has landed in LMDB; null with one shard. */
    private readonly settleBetweenShards: (() => Promise<void>) | null,
    /** A cluster's check of every owner node, run instead of this process's (which holds no money then). */
    private readonly checkElsewhere: (() => Promise<LedgerCheck>) | null = null,
  ) {
    this.#ok = new Gauge({
      name: 'parlayd_ledger_check_ok',
      help: 'The last ledger check: 1 ok, 0 not (0 too until one has run: parlayd_ledger_check_at_ms is 0 then)',
      registers: [registry],
    });
    this.#atMs = new Gauge({
      name: 'parlayd_ledger_check_at_ms',
      help: 'When the last ledger check finished (ms since the epoch)',
      registers: [registry],
    });
    this.#openInterest = new MoneyGauge(
      registry,
      'parlayd_open_interest',
      "Open positions' taker stakes plus makers' locked liabilities, as the last ledger check summed them",
    );
    new MoneyGauge(registry, 'parlayd_maker_locked', "Makers' collateral locked by open fills", () => {
      // One account read per registered maker (a bounded, in-memory list), at scrape time only.
      let sum = 0n;
      for (const address of makerAddresses()) sum += readAccount(store, makerAccount(address)).locked;
      return sum;
    });
  }

  run(): Promise<LedgerCheck> {
    if (this.#running === null) return this.#start();
    this.#next ??= this.#running
      .catch(() => undefined)
      .then(() => {
        this.#next = null;
        return this.#start();
      });
    return this.#next;
  }

  #start(): Promise<LedgerCheck> {
    const running = this.#checkSettled().finally(() => {
      if (this.#running === running) this.#running = null;
    });
    this.#running = running;
    return running;
  }

  async #checkSettled(): Promise<LedgerCheck> {
    let check = await (this.checkElsewhere ?? (() => this.#spawn()))();
    for (let round = 1; check.differences.length > 0 && this.settleBetweenShards !== null && round < RECHECKS; round++) {
      const seen = new Set(check.differences.map(differenceKey));
      await overloadedAfter(this.settleBetweenShards(), SETTLE_TIMEOUT_MS);
      const next = await this.#spawn();
      next.differences = next.differences.filter((difference) => seen.has(differenceKey(difference)));
      next.ok = next.differences.length === 0 && isConserved(next);
      check = next;
    }
    this.#ok.set(check.ok ? 1 : 0);
    this.#atMs.set(this.clock.nowMs());
    this.#openInterest.set(BigInt(check.at_risk_micros) + BigInt(check.locked_micros));
    return check;
  }

  #spawn(): Promise<LedgerCheck> {
    return new Promise((resolve, reject) => {
      const nowMs = this.clock.nowMs();
      const workerData =
        this.mapSizeBytes === undefined
          ? { dataDir: this.dataDir, nowMs }
          : { dataDir: this.dataDir, mapSizeBytes: this.mapSizeBytes, nowMs };
      const worker = new Worker(new URL('./check-worker.js', import.meta.url), { workerData });
      let result: LedgerCheck | null = null;
      worker.once('message', (check: LedgerCheck) => (result = check));
      worker.once('error', reject);
      worker.once('exit', (code) => (result === null ? reject(new Error(`ledger check worker exited with ${code}`)) : resolve(result)));
    });
  }
}

/** Snapshots a difference must be in, with several shards, to be reported (the header says why). */
const RECHECKS = 4;

/**
 * How long the shards may take to land what was on its way, as a read barrier may (http/read-barriers.ts):
 * past it LMDB cannot commit (a full disk), and the check answers 503 rather than a request held open.
 */
export const SETTLE_TIMEOUT_MS = 2_000;

/** A difference by what it is about, not by its amounts, which money still on its way changes. */
const differenceKey = (d: LedgerDifference): string => `${d.reason} ${d.account} ${d.bucket} ${d.ref ?? ''}`;

const isConserved = (check: LedgerCheck): boolean =>
  BigInt(check.total_micros) + BigInt(check.in_transit_micros) === BigInt(check.credited_micros) - BigInt(check.withdrawn_micros);

export const MICROS_PER_USDC = 1_000_000n;

/**
 * A money figure in /metrics without a double's rounding: `<name>_usdc` (whole USDC) and
 * `<name>_fraction_micros` (0..999,999). Set by hand, or, given `read`, read when /metrics is collected.
 */
export class MoneyGauge {
  readonly #usdc: Gauge;
  readonly #fraction: Gauge;

  constructor(registry: Registry, name: string, help: string, read?: () => bigint) {
    this.#usdc = new Gauge({
      name: `${name}_usdc`,
      help: `${help}: whole USDC (exact to 2^53 USDC)`,
      registers: [registry],
      // On the part registered (so collected and read) first: both parts come from one read.
      ...(read === undefined ? {} : { collect: () => this.set(read()) }),
    });
    this.#fraction = new Gauge({
      name: `${name}_fraction_micros`,
      help: `${help}: the micros under one USDC (0..999999, signed as the whole), to add to ${name}_usdc`,
      registers: [registry],
    });
  }

  set(micros: bigint): void {
    // BigInt division truncates toward 0: both parts carry the sign and still add up (a corrupt ledger can
    // sum below 0; the check reports that, the gauge only shows it).
    const usdc = micros / MICROS_PER_USDC;
    // Past 2^53 USDC (a sum no ledger holds) the whole part too would round: shown as NaN, never wrong.
    const isExact = usdc <= BigInt(Number.MAX_SAFE_INTEGER) && usdc >= -BigInt(Number.MAX_SAFE_INTEGER);
    this.#usdc.set(isExact ? Number(usdc) : Number.NaN);
    this.#fraction.set(Number(micros % MICROS_PER_USDC));
  }
}
