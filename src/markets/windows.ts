// Pure. Price-market windows (contract section 5): for a duration d, the window containing t is
// [floor(t / d) * d, that + d), so the last ms of one window and the first of the next are different windows.

export interface Window {
  startMs: number;
  endMs: number;
}

export function windowContaining(atMs: number, durationSecs: number): Window {
  const durationMs = durationSecs * 1000;
  const startMs = Math.floor(atMs / durationMs) * durationMs;
  return { startMs, endMs: startMs + durationMs };
}

export function windowKey(asset: string, durationSecs: number, startMs: number): string {
  return `${asset}:${durationSecs}:${startMs}`;
}
