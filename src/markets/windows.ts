// Pure. Price-market windows (contract section 5): for a duration d, the window containing t is
// [floor(t / d) * d, that + d), so the last ms of one window and the first of the next are different windows.
//
// Reach of a lookup. A window's market "exists from the moment it is asked for" (contract section 5), and the
// lookup route is unauthenticated, so each window a caller may ask for is a durable record anyone can create.
// Both directions are therefore bounded, in time and in windows (whichever is nearer): at any moment a caller
// can create at most WINDOWS_AHEAD_MAX + WINDOWS_BEHIND_CREATED_MAX + 1 = 2305 markets per (asset, duration),
// whatever duration is configured, and afterwards only the windows that time brings into reach (one per
// window elapsed):
// - ahead: up to 7 days, at most 2016 windows (7 days of 300 s windows) after the current one, and always the
//   next one. Beyond is 400 VALIDATION_FAILED: no market can exist there. A week covers planning a contest
//   or a bet on a coming window; every time stays far inside what a Date represents.
// - behind: a past window that nobody asked for is still created if it is at most 1 day and 288 windows
//   (1 day of 300 s windows) before the current one, and always the previous one. An older window is only
//   found (its market was created when it was asked for): never created, 404 MARKET_NOT_FOUND if absent.
//   Old markets stay reachable for history; nobody can fill the store with years of dead windows.
// With the default BTC, ETH, SOL × 300, 900, 3600 s that is at most 3 × (2305 + 769 + 193) = 9801 markets at once.

export interface Window {
  startMs: number;
  endMs: number;
}

const DAY_MS = 86_400_000;
export const LOOKAHEAD_MAX_MS = 7 * DAY_MS;
export const WINDOWS_AHEAD_MAX = 2016;
export const CREATE_LOOKBACK_MAX_MS = DAY_MS;
export const WINDOWS_BEHIND_CREATED_MAX = 288;

/** Where a window lies from the current one, for a lookup: see the bounds above. */
export type WindowReach = 'too-far-ahead' | 'creatable' | 'find-only';

export function windowContaining(atMs: number, durationSecs: number): Window {
  const durationMs = durationSecs * 1000;
  const startMs = Math.floor(atMs / durationMs) * durationMs;
  return { startMs, endMs: startMs + durationMs };
}

export function windowKey(asset: string, durationSecs: number, startMs: number): string {
  return `${asset}:${durationSecs}:${startMs}`;
}

/** How many windows after the current one a lookup may reach (≥ 1: the next window always). */
export function windowsAhead(durationSecs: number): number {
  return Math.max(1, Math.min(WINDOWS_AHEAD_MAX, Math.floor(LOOKAHEAD_MAX_MS / (durationSecs * 1000))));
}

/** How many windows before the current one a lookup still creates (≥ 1: the previous window always). */
export function windowsBehindCreated(durationSecs: number): number {
  return Math.max(1, Math.min(WINDOWS_BEHIND_CREATED_MAX, Math.floor(CREATE_LOOKBACK_MAX_MS / (durationSecs * 1000))));
}

/** Window indexes (floor(t / d)) compare exactly: both times are safe integers ≥ 0 and d ≥ 1000. */
export function windowReach(atMs: number, nowMs: number, durationSecs: number): WindowReach {
  const durationMs = durationSecs * 1000;
  const offset = Math.floor(atMs / durationMs) - Math.floor(nowMs / durationMs);
  if (offset > windowsAhead(durationSecs)) return 'too-far-ahead';
  if (offset < -windowsBehindCreated(durationSecs)) return 'find-only';
  return 'creatable';
}
