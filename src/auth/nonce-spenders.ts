// Main thread. Who spent the used login nonces still kept: per caller IP (an IPv6 caller
// per /64) and per network (IPv4 /24, IPv6 /48, lib/caller-network.ts). Every login attempt that names a
// good nonce spends it and keeps a record until the nonce expires (wallet-login.ts), and the service keeps at
// most MAX_USED_LOGIN_NONCES of them: without a bound per caller, one /24 filled all 100,000 in minutes and
// every login of everyone else was 503 until they expired.
//
// Past a caller's bound a login is refused (429, nothing spent) rather than the caller's oldest record
// dropped: a record dropped is a nonce that could be used again, the very replay the record exists to stop.
// In memory only: after a restart the counts start again from nothing, and the service-wide bound (which is
// durable) still holds.

/** The networks a caller is counted under, as the HTTP layer names them (lib/caller-network.ts). */
export interface CallerNetworks {
  /** The IP (an IPv6 caller's /64). */
  ip: string;
  /** Its IPv4 /24 or IPv6 /48. */
  network: string;
}

export interface NonceSpendersOptions {
  /** Kept nonces per IP (PARLAYD_LOGIN_NONCES_PER_IP). */
  maxPerIp: number;
  /** Kept nonces per IPv4 /24 or IPv6 /48 (PARLAYD_LOGIN_NONCES_PER_NETWORK). */
  maxPerNetwork: number;
  /** Keys tracked at once before stale ones are swept out: the service-wide bound of kept nonces. */
  maxKeys: number;
}

export class NonceSpenders {
  readonly #options: NonceSpendersOptions;
  /** Key (ip:… or net:…) -> expiries (ms) of the nonces it spent, in the order spent; pruned as they pass. */
  readonly #expiries = new Map<string, number[]>();

  constructor(options: NonceSpendersOptions) {
    this.#options = options;
  }

  /**
   * 0 when `caller` may spend one more nonce at `nowMs`; otherwise the seconds until one of its kept nonces
   * expires (for Retry-After).
   */
  retryAfterS(caller: CallerNetworks, nowMs: number): number {
    const [ipKey, networkKey] = keysOf(caller);
    return Math.max(
      this.#retryAfterOf(ipKey, this.#options.maxPerIp, nowMs),
      this.#retryAfterOf(networkKey, this.#options.maxPerNetwork, nowMs),
    );
  }

  /** Records that `caller` spent a nonce that expires at `expiresAtMs`. */
  record(caller: CallerNetworks, expiresAtMs: number, nowMs: number): void {
    if (this.#expiries.size >= this.#options.maxKeys) this.#sweep(nowMs);
    for (const key of keysOf(caller)) {
      const expiries = this.#live(key, nowMs);
      expiries.push(expiresAtMs);
      this.#expiries.set(key, expiries);
    }
  }

  /** Takes back a `record` whose nonce was not kept after all (its commit failed). */
  forget(caller: CallerNetworks, expiresAtMs: number): void {
    for (const key of keysOf(caller)) {
      const expiries = this.#expiries.get(key);
      const at = expiries?.lastIndexOf(expiresAtMs) ?? -1;
      if (at < 0) continue;
      expiries!.splice(at, 1);
      if (expiries!.length === 0) this.#expiries.delete(key);
    }
  }

  /** Keys tracked (tests). */
  get size(): number {
    return this.#expiries.size;
  }

  #retryAfterOf(key: string, max: number, nowMs: number): number {
    const expiries = this.#live(key, nowMs);
    if (expiries.length < max) return 0;
    return Math.max(1, Math.ceil((Math.min(...expiries) - nowMs) / 1000));
  }

  /** `key`'s expiries still in the future (the stale ones dropped); an empty list for an unknown key. */
  #live(key: string, nowMs: number): number[] {
    const expiries = this.#expiries.get(key);
    if (expiries === undefined) return [];
    const live = expiries.filter((expiresAtMs) => expiresAtMs > nowMs);
    if (live.length === 0) this.#expiries.delete(key);
    else this.#expiries.set(key, live);
    return live;
  }

  /** Drops every key whose nonces have all expired. Each live key holds a kept nonce, so few are left. */
  #sweep(nowMs: number): void {
    for (const key of [...this.#expiries.keys()]) this.#live(key, nowMs);
  }
}

function keysOf(caller: CallerNetworks): [string, string] {
  return [`ip:${caller.ip}`, `net:${caller.network}`];
}
