// Main thread. Runs the ledger check (check.ts) on a worker thread of its own (check-worker.ts) and keeps its
// last result for /metrics and the dashboard: whether it was ok, when, and the open interest it summed. One
// check at a time: callers that ask while one runs share its answer (it reads a snapshot as fresh as theirs).
import { Worker } from 'node:worker_threads';
import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { Store } from '../store/db.js';
import { makerAccount } from './accounts.js';
import { readAccount } from './ledger.js';
import type { LedgerCheck } from './check.js';

export class LedgerCheckRunner {
  #running: Promise<LedgerCheck> | null = null;
  readonly #ok: Gauge;
  readonly #atMs: Gauge;
  readonly #openInterest: Gauge;

  constructor(
    private readonly dataDir: string,
    private readonly mapSizeBytes: number | undefined,
    private readonly clock: Clock,
    store: Store,
    /** Registered makers' addresses: the locked collateral is summed over them when /metrics is read. */
    makerAddresses: () => Iterable<string>,
    registry: Registry,
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
    this.#openInterest = new Gauge({
      name: 'parlayd_open_interest_micros',
      help: "Open positions' taker stakes plus makers' locked liabilities, as the last ledger check summed them",
      registers: [registry],
    });
    new Gauge({
      name: 'parlayd_maker_locked_micros',
      help: "Makers' collateral locked by open fills (their accounts read when collected)",
      registers: [registry],
      collect() {
        // One account read per registered maker (a bounded, in-memory list), at scrape time only.
        let locked = 0n;
        for (const address of makerAddresses()) locked += readAccount(store, makerAccount(address)).locked;
        this.set(Number(locked));
      },
    });
  }

  run(): Promise<LedgerCheck> {
    this.#running ??= this.#spawn().finally(() => {
      this.#running = null;
    });
    return this.#running;
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
      worker.once('message', (check: LedgerCheck) => {
        result = check;
        this.#ok.set(check.ok ? 1 : 0);
        this.#atMs.set(this.clock.nowMs());
        this.#openInterest.set(Number(BigInt(check.at_risk_micros) + BigInt(check.locked_micros)));
      });
      worker.once('error', reject);
      worker.once('exit', (code) => (result === null ? reject(new Error(`ledger check worker exited with ${code}`)) : resolve(result)));
    });
  }
}
