// Load generator, pure. The fan-out targets (issue 35) as ratios to the bare reference measured in the same
// run on the same machine (bare-fanout-server.ts): the service against the most this machine, this client
// and these frames allow, so the verdict does not move with the machine.

/** What the ratios need of one side of a step (the service's, or the bare server's). */
export interface FanoutSide {
  deliveriesPerS: number;
  lastMaker: { p99Ms: number };
}

export interface FanoutVsBare {
  /** Service deliveries/s ÷ bare deliveries/s (higher is better; 1 = as fast as the bare server). */
  deliveries: number;
  /** Service last-maker p99 ÷ bare last-maker p99 (lower is better). */
  lastMakerP99: number;
}

export interface FanoutTarget {
  makers: number;
  /** Least service/bare deliveries ratio. */
  minDeliveriesRatio: number;
  /** Most service/bare last-maker p99 ratio; null: no latency target at this size. */
  maxP99Ratio: number | null;
}

export const FANOUT_TARGETS: readonly FanoutTarget[] = [
  { makers: 1_000, minDeliveriesRatio: 0.7, maxP99Ratio: null },
  { makers: 10_000, minDeliveriesRatio: 0.5, maxP99Ratio: 2 },
];

const ratio2 = (num: number, den: number) => (den > 0 ? Math.round((num / den) * 100) / 100 : Number.POSITIVE_INFINITY);

export function fanoutVsBare(service: FanoutSide, bare: FanoutSide): FanoutVsBare {
  return {
    deliveries: ratio2(service.deliveriesPerS, bare.deliveriesPerS),
    lastMakerP99: ratio2(service.lastMaker.p99Ms, bare.lastMaker.p99Ms),
  };
}

/** Whether a step meets its size's target, on the unrounded ratios (0.699 is not 0.7). */
export function meetsFanoutTarget(target: FanoutTarget, service: FanoutSide, bare: FanoutSide): boolean {
  const isFastEnough = service.deliveriesPerS >= target.minDeliveriesRatio * bare.deliveriesPerS;
  return isFastEnough && (target.maxP99Ratio === null || service.lastMaker.p99Ms <= target.maxP99Ratio * bare.lastMaker.p99Ms);
}
