// Any thread. The durable form of an RFQ and its public view. A shard writes these records; the main thread
// reads them for GET and replays (LMDB readers never block the writer).
import { marketKey } from './markets.js';
import assert from 'node:assert/strict';
import { Type, type Static } from '@sinclair/typebox';
import { Direction, MicrosString, Nullable } from '../contract/common.js';
import {
  OrderType,
  RfqFailureReason as RfqFailureReasonSchema,
  RfqStatus as RfqStatusSchema,
  type RfqFailureReason as FailureReason,
  type RfqResult,
  type RfqStatus,
  type TerminalRfqStatus as TerminalStatus,
} from '../contract/rfq.js';

/** From the schema (contract/rfq.ts); FailureReason keeps the name the shard imports. */
export type { RfqStatus, TerminalRfqStatus as TerminalStatus, RfqFailureReason as FailureReason } from '../contract/rfq.js';

// The stored shapes are typebox schemas, so the record module (rfq-records.ts) can check what it reads;
// each type is its schema's static type.
export const RfqLeg = Type.Object({ marketId: Type.Integer({ minimum: 1 }), direction: Direction });
export type RfqLeg = Static<typeof RfqLeg>;

export const RfqFill = Type.Object({
  makerAddress: Type.String(),
  quoteId: Type.String(),
  oddsE4: Type.Integer(),
  filledWagerMicros: MicrosString,
  payoutMicros: MicrosString,
});
export type RfqFill = Static<typeof RfqFill>;

export const RfqRecord = Type.Object({
  requestId: Type.String(),
  userId: Type.String(),
  wallet: Type.String(),
  kind: Type.Union([Type.Literal('signed'), Type.Literal('unsigned')]),
  legs: Type.Array(RfqLeg),
  wagerMicros: MicrosString,
  minOddsE4: Type.Integer(),
  /** Quote tolerance snapshotted at creation: 0 for signed orders (contract section 6). */
  toleranceBps: Type.Integer(),
  orderType: OrderType,
  /** Effective shield: shield_on, or the user's anonymous mode at creation. */
  isShielded: Type.Boolean(),
  createdAtMs: Type.Integer(),
  expiresAtMs: Type.Integer(),
  status: RfqStatusSchema,
  quotesReceived: Type.Integer({ minimum: 0 }),
  fill: Nullable(RfqFill),
  error: Nullable(RfqFailureReasonSchema),
  terminalAtMs: Nullable(Type.Integer()),
});
export type RfqRecord = Static<typeof RfqRecord>;

export const RfqKeyRecord = Type.Object({
  requestId: Type.String(),
  /** sha256 of the request's normalized content: same key with other content is 409. */
  contentHash: Type.String(),
});
export type RfqKeyRecord = Static<typeof RfqKeyRecord>;

/** How an RFQ ended: what its terminal record changes. */
export interface RfqEnd {
  status: TerminalStatus;
  fill: RfqFill | null;
  error: FailureReason | null;
  terminalAtMs: number;
}

/**
 * The record as it ends. Field by field rather than `{ ...record, status, ... }`: V8 (Node 20) keeps an
 * object made by a leading spread and then given more properties alive through young-generation
 * collections until a full one, and this runs for every RFQ (docs/performance.md, "Allocation shapes").
 */
export function endedRecord(record: RfqRecord, end: RfqEnd): RfqRecord {
  return {
    requestId: record.requestId,
    userId: record.userId,
    wallet: record.wallet,
    kind: record.kind,
    legs: record.legs,
    wagerMicros: record.wagerMicros,
    minOddsE4: record.minOddsE4,
    toleranceBps: record.toleranceBps,
    orderType: record.orderType,
    isShielded: record.isShielded,
    createdAtMs: record.createdAtMs,
    expiresAtMs: record.expiresAtMs,
    status: end.status,
    quotesReceived: record.quotesReceived,
    fill: end.fill,
    error: end.error,
    terminalAtMs: end.terminalAtMs,
  };
}

export const isTerminal = (status: RfqStatus): status is TerminalStatus =>
  status === 'completed' || status === 'failed' || status === 'cancelled' || status === 'timeout';

export function toRfqResult(record: RfqRecord, liveQuotesReceived?: number): RfqResult {
  assert.ok((record.status === 'completed') === (record.fill !== null), 'a fill exists exactly when completed');
  return {
    request_id: record.requestId,
    status: record.status,
    odds: record.fill === null ? null : record.fill.oddsE4 / 10_000,
    payout_micros: record.fill?.payoutMicros ?? null,
    filled_wager_micros: record.fill?.filledWagerMicros ?? null,
    error: record.error,
    quotes_received: liveQuotesReceived ?? record.quotesReceived,
  };
}

/** Replay keys (contract section 6): signed by (wallet, nonce), unsigned by (user, idempotency_key). */
export const signedReplayKey = (wallet: string, nonce: number) => `s:${wallet}:${nonce}`;
export const unsignedReplayKey = (userId: string, idempotencyKey: string) => `u:${userId}:${idempotencyKey}`;

/** Contract section 1: payout = floor(wager × odds_e4 / 10000), in integers. */
export function payoutMicros(wagerMicros: bigint, oddsE4: number): bigint {
  return (wagerMicros * BigInt(oddsE4)) / 10_000n;
}

/** The ledger reference of an RFQ's money: its reservation, then its filled stake (ledger.ts holds). */
export const rfqRef = (requestId: string) => `rfq:${requestId}`;

/** `openPositions`: one key per leg of a filled, unsettled RFQ, grouped by market (settlement.ts pages a market's). */
export const openPositionKey = (marketId: number, requestId: string) => `${marketKey(marketId)}:${requestId}`;
/** The keys of one market's open positions, for a range read. */
export const openPositionRange = (marketId: number) => ({ start: `${marketKey(marketId)}:`, end: `${marketKey(marketId)}:~` });
/** The request id of an open position's key. */
export const requestIdOfPosition = (key: string) => key.slice(key.indexOf(':') + 1);

/** Time-ordered key of one of a user's RFQs: the user's RFQs newest first are one reverse range (userRfqs). */
export const userRfqKey = (userId: string, createdAtMs: number, requestId: string) =>
  `${userId}:${String(createdAtMs).padStart(16, '0')}:${requestId}`;
/** Every userRfqKey of one user lies strictly between these two ('~' sorts after every digit). */
export const userRfqRange = (userId: string) => ({ start: `${userId}:`, end: `${userId}:~` });
/** A userRfqKey's (created_at_ms, request_id). */
export function userRfqPositionOf(userId: string, key: string): [createdAtMs: number, requestId: string] {
  const rest = key.slice(userId.length + 1);
  const colon = rest.indexOf(':');
  return [Number(rest.slice(0, colon)), rest.slice(colon + 1)];
}
