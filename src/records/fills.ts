// Any thread. A maker's fills, as stored for the maker PnL route (contract section 7) and for settlement.
import { hash } from 'node:crypto';
import type { PositionOutcome } from './ledger.js';
import { Type, type Static } from '@sinclair/typebox';
import { MicrosString, Nullable } from '../contract/common.js';
import { RfqLeg } from './rfqs.js';
import type { TakerPnl } from '../contract/rfq.js';

/** How a settled position ended (records/ledger.ts PositionOutcome), as a fill stores it. */
const FillOutcome = Type.Union([Type.Literal('won'), Type.Literal('lost'), Type.Literal('voided')]);

export const FillRecord = Type.Object({
  requestId: Type.String(),
  makerAddress: Type.String(),
  /** Absent on fills written before the money model (schema version 5). */
  quoteId: Type.Optional(Type.String()),
  /** Taker address, or a per-maker opaque id when the fill was shielded (contract section 7). */
  taker: Type.String(),
  userId: Type.String(),
  legs: Type.Array(RfqLeg),
  filledWagerMicros: MicrosString,
  payoutMicros: MicrosString,
  oddsE4: Type.Integer(),
  atMs: Type.Integer(),
  /** Set when the position settles: what the taker was paid (0 when it lost). */
  settledPaidMicros: Nullable(MicrosString),
  /** Set with settledPaidMicros: how the position ended, and when. */
  outcome: Type.Optional(Nullable(FillOutcome)),
  settledAtMs: Type.Optional(Nullable(Type.Integer())),
});
export type FillRecord = Static<typeof FillRecord>;

/** The fill once its position settled. Field by field, as records.ts endedRecord (docs/performance.md). */
export function settledFill(fill: FillRecord, paidMicros: bigint, outcome: PositionOutcome, atMs: number): FillRecord {
  return {
    requestId: fill.requestId,
    makerAddress: fill.makerAddress,
    ...(fill.quoteId === undefined ? {} : { quoteId: fill.quoteId }),
    taker: fill.taker,
    userId: fill.userId,
    legs: fill.legs,
    filledWagerMicros: fill.filledWagerMicros,
    payoutMicros: fill.payoutMicros,
    oddsE4: fill.oddsE4,
    atMs: fill.atMs,
    settledPaidMicros: paidMicros.toString(),
    outcome,
    settledAtMs: atMs,
  };
}

export const fillKey = (makerAddress: string, requestId: string) => `${makerAddress}:${requestId}`;
/** The part of every fillKey of one maker before the request id. */
export const makerFillsPrefix = (makerAddress: string) => `${makerAddress}:`;

/** Stable per-maker opaque id of a shielded taker: the same taker looks the same to one maker only. */
export function opaqueTakerId(makerAddress: string, userId: string): string {
  return `anon:${hash('sha256', `${makerAddress}:${userId}`).slice(0, 24)}`;
}

/** The row's type is its schema's (contract/rfq.ts); re-exported for taker-pnl.ts. */
export type { TakerPnl } from '../contract/rfq.js';

/**
 * Key of a fill in its maker's by-taker index (`makerTakerFills`): maker, taker, time, request. '|' separates
 * them because a shielded taker's id holds ':' and neither an address nor an id holds '|'.
 */
export const makerTakerFillKey = (makerAddress: string, taker: string, atMs: number, requestId: string) =>
  `${makerAddress}|${taker}|${String(atMs).padStart(16, '0')}|${requestId}`;
/** The keys of one maker's by-taker index ('~' sorts after every character of an address or a taker id). */
export const makerTakerFillsRange = (makerAddress: string) => ({ start: `${makerAddress}|`, end: `${makerAddress}|~` });
/** The keys of one taker's fills with one maker since `sinceMs`; its end is where the maker's next taker starts. */
export const takerFillsRange = (makerAddress: string, taker: string, sinceMs: number) => ({
  start: makerTakerFillKey(makerAddress, taker, sinceMs, ''),
  end: `${makerAddress}|${taker}|~`,
});
/** The taker of a makerTakerFillKey of `makerAddress`. */
export const takerOfMakerTakerFillKey = (makerAddress: string, key: string) =>
  key.slice(makerAddress.length + 1, key.indexOf('|', makerAddress.length + 1));
/** The request id of a makerTakerFillKey. */
export const requestIdOfMakerTakerFillKey = (key: string) => key.slice(key.lastIndexOf('|') + 1);

/**
 * Pure. One taker's row from its fills with one maker (contract section 11, Views): `fills` counts them all;
 * wagered, paid and pnl are over the settled ones alone, so that pnl = paid − wagered holds on the row itself
 * (the taker's result, positive when the taker won); the open fills' wagers are `open_wagered_micros`.
 */
export function takerPnlRow(taker: string, fills: Iterable<FillRecord>): TakerPnl {
  let count = 0;
  let wagered = 0n;
  let openWagered = 0n;
  let paid = 0n;
  for (const fill of fills) {
    count += 1;
    if (fill.settledPaidMicros === null) {
      openWagered += BigInt(fill.filledWagerMicros);
      continue;
    }
    wagered += BigInt(fill.filledWagerMicros);
    paid += BigInt(fill.settledPaidMicros);
  }
  return {
    taker,
    fills: count,
    wagered_micros: wagered.toString(),
    paid_micros: paid.toString(),
    pnl_micros: (paid - wagered).toString(),
    open_wagered_micros: openWagered.toString(),
  };
}
