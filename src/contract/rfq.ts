// RFQ request and result schemas (interface.md: Order, Unsigned RFQ request, RFQ result; contract section 6).
import { nextCursorProperty, pageQueryProperties } from './paging.js';
import { Type, type Static } from '@sinclair/typebox';
import { AddressInput, Direction, MarketId, MicrosString, Nullable, SafeInt, StrictObject, Uuid, UuidInput } from './common.js';
import { MAX_SIGNATURE_CHARS } from './auth.js';
import { MAX_LEGS, MIN_LEGS, ORDER_TYPE_FOK, ORDER_TYPE_IOC } from './order-codec.js';

export { MAX_LEGS };
export const MAX_WAIT_MS = 10_000;

export const Leg = StrictObject({ market_id: MarketId, direction: Direction });
export type Leg = Static<typeof Leg>;
const Legs = Type.Array(Leg, { minItems: MIN_LEGS, maxItems: MAX_LEGS });
/** 1 = IOC, 2 = FOK; FOK when omitted. */
export const OrderType = Type.Union([Type.Literal(ORDER_TYPE_IOC), Type.Literal(ORDER_TYPE_FOK)], { description: '1 = IOC, 2 = FOK' });
export type OrderType = Static<typeof OrderType>;
/** What an order without order_type is (contract section 6). */
export const DEFAULT_ORDER_TYPE: OrderType = ORDER_TYPE_FOK;
/** Payout multiplier; signed as round(min_odds * 10000) in a u32, so it must be positive and below 429497. */
const MinOdds = Type.Number({ exclusiveMinimum: 0, maximum: 429_496, description: 'minimum acceptable payout multiplier' });

/**
 * Any u64 the signing format can carry: a wager below the configured minimum, 0 included, is admission's 422
 * WAGER_OUT_OF_RANGE (contract section 2), not a schema violation.
 */
const Wager = SafeInt({ description: 'USDC micros; outside PARLAYD_WAGER_MIN_MICROS..PARLAYD_WAGER_MAX_MICROS is 422 WAGER_OUT_OF_RANGE' });

export const Order = StrictObject({
  user: AddressInput,
  wager_micros: Wager,
  min_odds: MinOdds,
  legs: Legs,
  nonce: SafeInt(),
  expires_at_ms: SafeInt(),
  order_type: Type.Optional(OrderType),
  shield_on: Type.Boolean(),
  // Any text up to the bound reaches admission, which answers 400 INVALID_SIGNATURE for one that is not base64
  // of 65 bytes (contract section 2), the empty string included.
  signature: Type.String({
    maxLength: MAX_SIGNATURE_CHARS,
    description: 'base64 of the 65-byte signature (88 chars); other text is 400 INVALID_SIGNATURE',
  }),
});
export type Order = Static<typeof Order>;

export const SignedRfqRequest = StrictObject({ order: Order });

export const UnsignedRfqRequest = StrictObject({
  wager_micros: Wager,
  min_odds: MinOdds,
  legs: Legs,
  order_type: Type.Optional(OrderType),
  shield_on: Type.Boolean(),
  idempotency_key: UuidInput,
});
export type UnsignedRfqRequest = Static<typeof UnsignedRfqRequest>;

export const RfqStatus = Type.Union([
  Type.Literal('pending'),
  Type.Literal('finalizing'),
  Type.Literal('completed'),
  Type.Literal('failed'),
  Type.Literal('cancelled'),
  Type.Literal('timeout'),
]);
export type RfqStatus = Static<typeof RfqStatus>;
export type TerminalRfqStatus = Exclude<RfqStatus, 'pending' | 'finalizing'>;

/**
 * Why a failed RFQ failed: the result's `error` (contract section 6). Its own component in the OpenAPI
 * document ($id), so a client can switch on the list instead of guessing it from prose.
 */
export const RfqFailureReason = Type.Union(
  [
    Type.Literal('NO_ACCEPTABLE_QUOTE', { description: 'no quote met min_odds (within the quote tolerance)' }),
    Type.Literal('INSUFFICIENT_LIQUIDITY', { description: 'FOK: no acceptable quote covered the whole wager' }),
    Type.Literal('MAKER_REJECTED', { description: 'every maker asked for a last look declined or let it run out' }),
    Type.Literal('ORDER_EXPIRED', { description: "the signed order's expires_at_ms passed before a fill" }),
    Type.Literal('MARKET_CLOSED', { description: 'a leg stopped being open for betting before the fill' }),
    Type.Literal('SERVICE_RESTARTED', { description: 'the service stopped while the RFQ was active; its reservation was released' }),
  ],
  { $id: 'RfqFailureReason' },
);
export type RfqFailureReason = Static<typeof RfqFailureReason>;

export const RfqResult = Type.Object(
  {
    request_id: Uuid,
    status: RfqStatus,
    odds: Nullable(Type.Number()),
    payout_micros: Nullable(MicrosString),
    filled_wager_micros: Nullable(MicrosString),
    error: Nullable(RfqFailureReason),
    quotes_received: Type.Integer({ minimum: 0 }),
  },
  { $id: 'RfqResult' },
);
export type RfqResult = Static<typeof RfqResult>;

export const WaitQuery = StrictObject({ wait_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_WAIT_MS })) });
export const RfqIdParams = StrictObject({ id: Uuid });

/** A maker's takers a page of GET /v1/mm/taker_pnl lists (taker order). */
export const TAKER_PNL_PAGE = { maxLimit: 500, defaultLimit: 100 } as const;
export const TakerPnlQuery = StrictObject({ since_ms: Type.Optional(SafeInt()), ...pageQueryProperties(TAKER_PNL_PAGE) });
/** One taker's row of GET /v1/mm/taker_pnl (records/fills.ts takerPnlRow computes it). */
export const TakerPnl = Type.Object({
  taker: Type.String({ description: 'taker address, or a stable opaque id for shielded fills' }),
  fills: Type.Integer({ minimum: 0, description: 'fills since since_ms, open and settled' }),
  /** Filled wagers of the settled fills: the same fills as paid_micros and pnl_micros. */
  wagered_micros: MicrosString,
  /** What the settled fills paid the taker. */
  paid_micros: MicrosString,
  pnl_micros: Type.String({
    pattern: '^-?[0-9]+$',
    description: "the taker's result on the settled fills, paid_micros − wagered_micros (positive when the taker won)",
  }),
  /** Filled wagers of the open fills, in none of the three above until they settle. */
  open_wagered_micros: MicrosString,
});
export type TakerPnl = Static<typeof TakerPnl>;
export const TakerPnlResponse = Type.Object({
  takers: Type.Array(TakerPnl),
  ...nextCursorProperty,
});
