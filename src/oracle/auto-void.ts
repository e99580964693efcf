// Main thread. Auto-void (contract section 12): a market of any kind still unresolved
// PARLAYD_RESOLUTION_GRACE_MS after it was due (markets/due-index.ts, dueAtMsOf: a window's end, a mention
// market's resolution_time_ms, else live_ends_at_ms, else betting_closes_at_ms) is VOIDED through the same
// Markets.resolve as an admin resolve (resolvedBy 'auto_void'), so its positions and contest picks settle
// as voids. Nothing then stays at risk for longer than the grace.
//
// "Now" is the injected Clock (tests move it). A pass runs every SWEEP_INTERVAL_MS, and once at start; it
// reads the due index from its oldest key (one range read of at most VOIDS_PER_TURN keys) and voids those
// due before now - grace, VOIDS_PER_TURN per event-loop turn, until none is left. Bounded per turn like
// contest settlement, so 10,000 markets voided at once never hold the main thread for long.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import { isApiError } from '../lib/errors.js';
import type { Markets } from '../markets/markets.js';

export const VOIDS_PER_TURN = 64;
/** How often a pass looks for markets past the grace: at most a second late on a grace of hours. */
export const SWEEP_INTERVAL_MS = 1000;

export class AutoVoidSweep {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private isStopped = false;

  constructor(
    private readonly markets: Markets,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly graceMs: number,
    private readonly voidsPerTurn = VOIDS_PER_TURN,
  ) {}

  start(intervalMs = SWEEP_INTERVAL_MS): void {
    this.timer = setInterval(() => void this.sweep(), intervalMs);
    this.timer.unref();
    void this.sweep();
  }

  /**
   * One pass (or the pass already running): voids every market due at or before now - grace, and resolves
   * with how many it voided. A batch in which nothing could be voided (every resolve failed) ends the pass,
   * so a market whose resolution keeps failing is retried by the next pass, not in a loop.
   */
  sweep(): Promise<number> {
    this.running ??= this.runPass().finally(() => (this.running = null));
    return this.running;
  }

  async stop(): Promise<void> {
    this.isStopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    await this.running;
  }

  private async runPass(): Promise<number> {
    let voided = 0;
    while (!this.isStopped) {
      const cutoffMs = this.clock.nowMs() - this.graceMs;
      if (cutoffMs < 0) break;
      const marketIds = this.markets.dueMarketIds(cutoffMs, this.voidsPerTurn);
      if (marketIds.length === 0) break;
      const results = await Promise.allSettled(marketIds.map((id) => this.markets.resolve(id, 'VOID', 'auto_void')));
      let progressed = 0;
      results.forEach((result, i) => {
        if (result.status === 'fulfilled') {
          progressed++;
          return;
        }
        // Resolved another way between the read and the resolve: the first resolution stands.
        if (isApiError(result.reason) && result.reason.code === 'MARKET_ALREADY_RESOLVED') {
          progressed++;
          return;
        }
        // A listener failed (the void is durable; markets/resolution.ts) or the void did not commit (retried
        // next pass).
        if (this.markets.get(marketIds[i]!)?.status !== 'OPEN') progressed++;
        this.log.error({ err: result.reason, marketId: marketIds[i] }, 'auto-void of a market failed');
      });
      voided += results.filter((r) => r.status === 'fulfilled').length;
      if (progressed === 0) break;
      await nextTurn();
    }
    if (voided > 0) this.log.info({ voided, graceMs: this.graceMs }, 'markets auto-voided after the resolution grace');
    return voided;
  }
}
