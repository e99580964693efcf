// Main thread. The market-maker registry (contract section 7): makers are registered by address with a
// display name, by an admin. Records live in the LMDB `makers` database (address -> MakerRecord); a copy is
// held in memory so the handshake asks "is this a maker?" without a read per auth. The registry is small
// (a handful to a few hundred makers), so it is loaded whole at start.
import { table } from '../store/records.js';
import assert from 'node:assert/strict';
import type { Clock } from '../lib/clock.js';
import type { Store } from '../store/db.js';
import type { MakerRecord } from '../records/makers.js';

/** Bound on registered makers (STYLE: a limit on everything); far above any real venue's maker count. */
export const MAX_MAKERS = 10_000;

const CANONICAL_ADDRESS_RE = /^0x[0-9a-f]{40}$/;

export type AddMakerOutcome = { kind: 'created' | 'updated'; maker: MakerRecord } | { kind: 'full' };

export class MakerRegistry {
  readonly #makers = new Map<string, MakerRecord>();
  /** Told of each maker registered, renamed (its record) or removed (null), once durable. */
  onChanged: ((address: string, maker: MakerRecord | null) => void) | null = null;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {
    for (const { key, value } of this.db.getRange()) {
      assert.ok(key === value.address && CANONICAL_ADDRESS_RE.test(key), `corrupt maker record ${key}`);
      this.#makers.set(key, value);
    }
  }

  private get db() {
    return table(this.store, 'makers');
  }

  /** True when `address` (canonical lowercase) is a registered maker. */
  has(address: string): boolean {
    return this.#makers.has(address);
  }

  get(address: string): MakerRecord | undefined {
    return this.#makers.get(address);
  }

  /** Oldest first. */
  list(): MakerRecord[] {
    return [...this.#makers.values()].sort((a, b) => a.createdAtMs - b.createdAtMs || (a.address < b.address ? -1 : 1));
  }

  get size(): number {
    return this.#makers.size;
  }

  /** Registers a maker, or renames one already registered (idempotent for the same name). Durable on return. */
  async add(address: string, name: string): Promise<AddMakerOutcome> {
    assert.ok(CANONICAL_ADDRESS_RE.test(address), 'registry addresses are canonical lowercase');
    const existing = this.#makers.get(address);
    if (existing === undefined && this.#makers.size >= MAX_MAKERS) return { kind: 'full' };
    const maker: MakerRecord = { address, name, createdAtMs: existing?.createdAtMs ?? this.clock.nowMs() };
    await this.db.put(address, maker);
    // Visible to the handshake only once durable: a maker never authenticates on a record a crash would lose.
    this.#makers.set(address, maker);
    this.onChanged?.(address, maker);
    return { kind: existing === undefined ? 'created' : 'updated', maker };
  }

  /**
   * Unregisters a maker; false when it was not registered. The in-memory copy goes first, synchronously, so
   * no handshake can complete for this address once this call has started.
   */
  async remove(address: string): Promise<boolean> {
    if (!this.#makers.delete(address)) return false;
    await this.db.remove(address);
    this.onChanged?.(address, null);
    return true;
  }
}
