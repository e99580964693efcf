// Any thread. A maker's fills, as stored for the maker PnL route (contract section 7) and for settlement.
import { hash } from 'node:crypto';
import type { RfqLeg } from './records.js';

export interface FillRecord {
  requestId: string;
  makerAddress: string;
  /** Taker address, or a per-maker opaque id when the fill was shielded (contract section 7). */
  taker: string;
  userId: string;
  legs: RfqLeg[];
  filledWagerMicros: string;
  payoutMicros: string;
  oddsE4: number;
  atMs: number;
  /** Set when the position settles: what the taker was paid (0 when it lost). */
  settledPaidMicros: string | null;
}

/** The fill once its position settled. Field by field, as records.ts endedRecord (docs/performance.md). */
export function settledFill(fill: FillRecord, paidMicros: bigint): FillRecord {
  return {
    requestId: fill.requestId,
    makerAddress: fill.makerAddress,
    taker: fill.taker,
    userId: fill.userId,
    legs: fill.legs,
    filledWagerMicros: fill.filledWagerMicros,
    payoutMicros: fill.payoutMicros,
    oddsE4: fill.oddsE4,
    atMs: fill.atMs,
    settledPaidMicros: paidMicros.toString(),
  };
}

export const fillKey = (makerAddress: string, requestId: string) => `${makerAddress}:${requestId}`;

/** Stable per-maker opaque id of a shielded taker: the same taker looks the same to one maker only. */
export function opaqueTakerId(makerAddress: string, userId: string): string {
  return `anon:${hash('sha256', `${makerAddress}:${userId}`).slice(0, 24)}`;
}

export interface TakerPnl {
  taker: string;
  fills: number;
  wagered_micros: string;
  paid_micros: string;
  pnl_micros: string;
}

/**
 * Pure. Per taker, from one maker's fills: wagered = filled wagers, paid = what settled positions paid the
 * taker, pnl = the maker's result on settled fills (wager kept minus payout paid). Open fills count in
 * fills and wagered but not yet in pnl.
 */
export function aggregateTakerPnl(fills: Iterable<FillRecord>): TakerPnl[] {
  const byTaker = new Map<string, { fills: number; wagered: bigint; paid: bigint; pnl: bigint }>();
  for (const fill of fills) {
    const row = byTaker.get(fill.taker) ?? { fills: 0, wagered: 0n, paid: 0n, pnl: 0n };
    row.fills += 1;
    row.wagered += BigInt(fill.filledWagerMicros);
    if (fill.settledPaidMicros !== null) {
      const paid = BigInt(fill.settledPaidMicros);
      row.paid += paid;
      row.pnl += BigInt(fill.filledWagerMicros) - paid;
    }
    byTaker.set(fill.taker, row);
  }
  return [...byTaker.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([taker, r]) => ({
      taker,
      fills: r.fills,
      wagered_micros: r.wagered.toString(),
      paid_micros: r.paid.toString(),
      pnl_micros: r.pnl.toString(),
    }));
}
