// Main thread, owned by the authenticator (authenticator.ts), which adds and removes sockets; the upgrade gate
// (upgrade.ts) asks it for refusals. The dashboard's feed (dashboard/feed.ts) keeps its sockets awaiting a
// token in one too. The sockets connected and not yet authenticated: how many in all, per
// remote address (an IPv6 /64) and per network (an IPv4 /24, an IPv6 /48), and in which order they came, so a
// caller over its own share is refused, the longest-waiting idle socket is evicted when every place is taken,
// and the auth deadline shortens under pressure. Pure bookkeeping: its callers decide and
// close sockets.
//
// Bounds: at most `maxPending` sockets (none is added past it: a newcomer evicts or is refused first); each
// map holds an entry only while it counts at least one socket, so every structure holds at most `maxPending`.
import assert from 'node:assert/strict';

/** What the book needs of a socket: where it comes from, and whether it is idle (may be evicted). */
export interface PendingSocket {
  /** What the per-address limit counts it under (lib/caller-network.ts callerNetwork). */
  readonly remoteNetwork: string;
  /** What the per-network limit counts it under (callerWideNetwork). */
  readonly remoteWideNetwork: string;
  /** It has sent nothing yet that is being checked: evicting it loses no work in progress. */
  readonly isIdleWhilePending: boolean;
}

export interface PendingAuthLimits {
  maxPending: number;
  maxPerAddress: number;
  maxPerNetwork: number;
}

/** Why a new socket may not wait for auth, or null when it may (perhaps after an eviction: see isFull). */
export type PendingRefusal = 'PER_ADDRESS' | 'PER_NETWORK' | null;

export class PendingAuth<T extends PendingSocket = PendingSocket> {
  #count = 0;
  readonly #byAddress = new Map<string, number>();
  readonly #byNetwork = new Map<string, number>();
  /** Oldest first (a Set keeps insertion order). */
  readonly #order = new Set<T>();

  constructor(private readonly limits: PendingAuthLimits) {
    for (const [name, value] of Object.entries(limits))
      assert.ok(Number.isSafeInteger(value) && value >= 1, `${name} must be an integer >= 1`);
  }

  get count(): number {
    return this.#count;
  }

  /** Every place is taken: a newcomer needs an eviction (oldestIdle) or a refusal. */
  get isFull(): boolean {
    return this.#count >= this.limits.maxPending;
  }

  /**
   * More than half the places are taken (asked right after adding a socket: counting it), so that socket
   * gets the short auth deadline. A maker answers its challenge within milliseconds: only idle sockets
   * feel it.
   */
  get isUnderPressure(): boolean {
    return this.#count > this.limits.maxPending / 2;
  }

  /** Whether a socket from this address and network is over their shares (checked before any eviction). */
  refusalFor(remoteAddressKey: string, remoteNetworkKey: string): PendingRefusal {
    if ((this.#byAddress.get(remoteAddressKey) ?? 0) >= this.limits.maxPerAddress) return 'PER_ADDRESS';
    if ((this.#byNetwork.get(remoteNetworkKey) ?? 0) >= this.limits.maxPerNetwork) return 'PER_NETWORK';
    return null;
  }

  add(conn: T): void {
    assert.ok(!this.#order.has(conn), 'a socket added to the pending set twice');
    // The caller makes room first (an eviction) or refuses: past the bound is a bug.
    assert.ok(this.#count < this.limits.maxPending, 'a pending socket added past the bound');
    this.#count++;
    this.#order.add(conn);
    this.#byAddress.set(conn.remoteNetwork, (this.#byAddress.get(conn.remoteNetwork) ?? 0) + 1);
    this.#byNetwork.set(conn.remoteWideNetwork, (this.#byNetwork.get(conn.remoteWideNetwork) ?? 0) + 1);
  }

  /** Idempotent: false when `conn` was not pending. */
  remove(conn: T): boolean {
    if (!this.#order.delete(conn)) return false;
    this.#count--;
    decrement(this.#byAddress, conn.remoteNetwork);
    decrement(this.#byNetwork, conn.remoteWideNetwork);
    return true;
  }

  /**
   * The longest-waiting socket that has not sent its auth_response (one being verified is about to leave
   * on its own), or null when every pending socket is being verified. Walks at most `maxPending` entries.
   */
  oldestIdle(): T | null {
    for (const conn of this.#order) if (conn.isIdleWhilePending) return conn;
    return null;
  }
}

/** One fewer under `key`; an entry exists only while it counts at least one, so the map stays bounded. */
function decrement(counts: Map<string, number>, key: string): void {
  const count = counts.get(key) ?? 0;
  if (count <= 1) counts.delete(key);
  else counts.set(key, count - 1);
}
