// Maker SDK, in the maker's process. When to reconnect after a drop: capped exponential backoff with jitter,
// so a fleet of makers dropped together does not come back in lockstep.

export interface ReconnectOptions {
  /** First delay after a drop, ms (default 250). AUTH_EXPIRED reconnects at once. */
  initialDelayMs?: number;
  /** Cap of the delay, ms (default 30 000). */
  maxDelayMs?: number;
  /** Growth per failed attempt (default 2). */
  factor?: number;
  /** +/- this fraction of random spread, so a fleet does not reconnect in lockstep (default 0.2). */
  jitter?: number;
}

/** The options with their defaults; null when reconnecting is off (`false`). */
export function reconnectPolicyOf(options: ReconnectOptions | false | undefined): Required<ReconnectOptions> | null {
  return options === false ? null : { initialDelayMs: 250, maxDelayMs: 30_000, factor: 2, jitter: 0.2, ...options };
}

/** Delay before reconnect attempt `attempt` (0-based): capped exponential with +/- jitter. Pure. */
export function backoffDelayMs(attempt: number, options: Required<ReconnectOptions>, random: () => number = Math.random): number {
  const base = Math.min(options.maxDelayMs, options.initialDelayMs * options.factor ** attempt);
  const spread = base * options.jitter * (2 * random() - 1);
  return Math.max(0, Math.round(base + spread));
}
