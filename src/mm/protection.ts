// Main thread. Each maker's protection (docs/maker-protocol.md section 3.7): limits the maker sets
// (PUT /v1/mm/protection) and limits the operator sets (PUT /v1/admin/market-makers/{address}/protection),
// the tighter of each applying, checked on every fill the maker makes. A fill that reaches a limit trips the
// protection; the desk (desk.ts) then withdraws the maker's quotes and refuses new ones until it resets.
//
// Where state lives: the limits in LMDB (`makerProtection`, durable before the PUT answers, loaded whole at
// start: one record per maker and side); the fills counted and the tripped flag in memory only, so a restart
// starts the counts afresh and untrips (every quote is withdrawn by the restart anyway).
//
// Bounds: fills counted per maker <= MAX_COUNTED_FILLS (past it the oldest is forgotten: the counts then
// undercount, which only a maker filling 65,536 times inside one window could notice).
import { FillWindow } from './fill-window.js';
import { table } from '../store/records.js';
import type { Store } from '../store/db.js';
import type { ProtectionTripReason } from '../contract/mm-stream.js';
import type { ProtectionLimits } from '../records/makers.js';

export type ProtectionSide = 'maker' | 'admin';

export const NO_LIMITS: ProtectionLimits = Object.freeze({
  window_ms: null,
  max_fills: null,
  max_filled_wager_micros: null,
  max_locked_micros: null,
});

const MAX_COUNTED_FILLS = 65_536;

/**
 * Pure. The tighter of two sets of limits, field by field: the smaller cap; the longer window (it counts more
 * fills). A null field takes the other side's; a null window means the counts run since the last reset.
 */
export function tighterOf(a: ProtectionLimits, b: ProtectionLimits): ProtectionLimits {
  const min = <T extends number | bigint>(x: T | null, y: T | null): T | null => (x === null ? y : y === null ? x : x < y ? x : y);
  const minMicros = (x: string | null, y: string | null) =>
    min(x === null ? null : BigInt(x), y === null ? null : BigInt(y))?.toString() ?? null;
  return {
    window_ms: a.window_ms === null ? b.window_ms : b.window_ms === null ? a.window_ms : Math.max(a.window_ms, b.window_ms),
    max_fills: min(a.max_fills, b.max_fills),
    max_filled_wager_micros: minMicros(a.max_filled_wager_micros, b.max_filled_wager_micros),
    max_locked_micros: minMicros(a.max_locked_micros, b.max_locked_micros),
  };
}

interface FillCounts {
  window: FillWindow;
  tripped: ProtectionTripReason | null;
}

export class Protection {
  readonly #limits = new Map<string, ProtectionLimits>();
  /** Told of limits once they are durable (a cluster's coordinator tells its gateways: coordinator-door.ts). */
  onLimitsSet: ((side: ProtectionSide, address: string, limits: ProtectionLimits) => void) | null = null;
  readonly #counts = new Map<string, FillCounts>();

  constructor(
    private readonly store: Store,
    /** The maker's collateral locked right now (the ledger's maker `locked` bucket), for max_locked_micros. */
    private readonly lockedMicrosOf: (address: string) => bigint,
    /**
     * The same once the ledger shows every fill decided before the call (the journal engine, whose ledger is a
     * read model written behind; a cluster, where it is the maker's shard node's), or null when
     * lockedMicrosOf always does.
     */
    private readonly readLocked: ((address: string) => Promise<bigint>) | null = null,
  ) {
    for (const { key, value } of this.db.getRange()) this.#limits.set(key, value);
  }

  private get db() {
    return table(this.store, 'makerProtection');
  }

  limitsOf(side: ProtectionSide, address: string): ProtectionLimits {
    return this.#limits.get(`${side}:${address}`) ?? NO_LIMITS;
  }

  effectiveOf(address: string): ProtectionLimits {
    return tighterOf(this.limitsOf('maker', address), this.limitsOf('admin', address));
  }

  trippedOf(address: string): ProtectionTripReason | null {
    return this.#counts.get(address)?.tripped ?? null;
  }

  /** Durable before it resolves; applies from the next fill. */
  async setLimits(side: ProtectionSide, address: string, limits: ProtectionLimits): Promise<void> {
    const key = `${side}:${address}`;
    await this.db.put(key, limits);
    this.#limits.set(key, limits);
    this.onLimitsSet?.(side, address, limits);
  }

  /** A cluster gateway's copy of limits the coordinator holds (coordinator-link.ts): in memory only. */
  copyLimits(side: ProtectionSide, address: string, limits: ProtectionLimits): void {
    this.#limits.set(`${side}:${address}`, limits);
  }

  /** Every limit set, in key order after `afterKey` (`<side>:<address>`), at most `limit`. */
  limitsAfter(afterKey: string | null, limit: number): Array<{ side: ProtectionSide; address: string; limits: ProtectionLimits }> {
    return [...this.#limits.keys()]
      .filter((key) => afterKey === null || key > afterKey)
      .sort()
      .slice(0, limit)
      .map((key) => {
        const [side, address] = key.split(':') as [ProtectionSide, string];
        return { side, address, limits: this.#limits.get(key)! };
      });
  }

  /**
   * Counts a fill of `address` at `nowMs` and returns the limit it reached, if it is the one that trips the
   * protection (null otherwise, and while already tripped).
   */
  onFill(address: string, filledWagerMicros: bigint, nowMs: number): ProtectionTripReason | null | Promise<ProtectionTripReason | null> {
    let counts = this.#counts.get(address);
    if (counts === undefined) this.#counts.set(address, (counts = { window: new FillWindow(MAX_COUNTED_FILLS), tripped: null }));
    const limits = this.effectiveOf(address);
    const oldestCountedMs = limits.window_ms === null ? -Infinity : nowMs - limits.window_ms;
    counts.window.add(nowMs, filledWagerMicros, oldestCountedMs);
    if (counts.tripped !== null) return null;
    const { window } = counts;
    const { readLocked } = this;
    if (readLocked === null || limits.max_locked_micros === null) {
      counts.tripped = reachedLimit(limits, window.count, window.wagerSumMicros, () => this.lockedMicrosOf(address));
      return counts.tripped;
    }
    // Not known yet (below any limit): checked once the barrier has passed.
    counts.tripped = reachedLimit(limits, window.count, window.wagerSumMicros, () => -1n);
    if (counts.tripped !== null) return counts.tripped;
    // The locked bucket once the ledger shows this fill; unless a reset or another trip came meanwhile. A
    // barrier refused (the shards overloaded, or not settling in its bound) leaves this fill unchecked: the
    // maker's next fill asks again, and the bucket it then reads has this one in it.
    const counted = counts;
    return readLocked(address).then(
      (lockedMicros) => {
        if (this.#counts.get(address) !== counted || counted.tripped !== null) return null;
        const maxLocked = this.effectiveOf(address).max_locked_micros;
        if (maxLocked === null || lockedMicros < BigInt(maxLocked)) return null;
        return (counted.tripped = 'MAX_LOCKED');
      },
      () => null,
    );
  }

  /** protection_reset: quotes are taken again and the counts start afresh. */
  reset(address: string): void {
    this.#counts.delete(address);
  }
}

/** Pure: the first limit reached (a count at or over its cap), or null. */
function reachedLimit(
  limits: ProtectionLimits,
  fills: number,
  wagerMicros: bigint,
  lockedMicros: () => bigint,
): ProtectionTripReason | null {
  if (limits.max_fills !== null && fills >= limits.max_fills) return 'MAX_FILLS';
  if (limits.max_filled_wager_micros !== null && wagerMicros >= BigInt(limits.max_filled_wager_micros)) return 'MAX_FILLED_WAGER';
  if (limits.max_locked_micros !== null && lockedMicros() >= BigInt(limits.max_locked_micros)) return 'MAX_LOCKED';
  return null;
}
