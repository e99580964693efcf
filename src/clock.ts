// The one source of "now" for every decision that depends on time, so tests can move it
// (a clock is the edge of the world; STYLE: fakes only there).
export interface Clock {
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };
