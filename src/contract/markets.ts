import { Type, type Static } from '@sinclair/typebox';
import { MarketId, Nullable, SafeInt, StrictObject } from './common.js';
import { nextCursorProperty, pageQueryProperties } from './paging.js';

export const MarketStatus = Type.Union([Type.Literal('OPEN'), Type.Literal('RESOLVED'), Type.Literal('VOIDED')]);
export const Outcome = Type.Union([Type.Literal('YES'), Type.Literal('NO')]);
/** The last instant a JavaScript Date represents (ECMA-262: ±8.64e15 ms); every market time is a date. */
export const MAX_DATE_MS = 8_640_000_000_000_000;
const Ms = SafeInt({ maximum: MAX_DATE_MS, description: 'Unix ms' });

/** Who resolved a market (contract section 12): the oracle's prices, an operator, or the grace running out. */
export const ResolvedBy = Type.Union([Type.Literal('oracle'), Type.Literal('admin'), Type.Literal('auto_void')]);
export type ResolvedBy = Static<typeof ResolvedBy>;
/** A price × 10^8 as a decimal string (contract section 12): u64 in the signed bytes, so never a JSON number on output. */
export const PriceE8String = Type.String({ pattern: '^[0-9]+$', description: 'price × 10^8, decimal integer string' });

/** Contract section 5. Price-only fields are absent on mention markets. */
export const Market = Type.Object(
  {
    market_id: MarketId,
    kind: Type.Union([Type.Literal('price'), Type.Literal('mention')]),
    name: Type.String(),
    description: Nullable(Type.String()),
    status: MarketStatus,
    outcome: Nullable(Outcome),
    asset: Type.Optional(Type.String()),
    duration_secs: Type.Optional(SafeInt({ minimum: 1 })),
    window_start_ms: Type.Optional(Ms),
    window_end_ms: Type.Optional(Ms),
    source_kind: Nullable(Type.String()),
    source_event_id: Nullable(Type.String()),
    source_market_id: Nullable(Type.String()),
    betting_closes_at_ms: Nullable(Ms),
    live_ends_at_ms: Nullable(Ms),
    resolution_time_ms: Nullable(Ms),
    resolved_by: Nullable(ResolvedBy),
    start_price_e8: Nullable(PriceE8String),
    end_price_e8: Nullable(PriceE8String),
  },
  { $id: 'Market' },
);
export type Market = Static<typeof Market>;

/** A market by id, as the views that show markets look it up (contests, positions, maker fills). */
export type MarketOf = (marketId: number) => Market | undefined;
/**
 * A market as LMDB holds it: records written before contract section 12 lack the three oracle fields, and
 * read as null (markets/due-index.ts, withOracleFields). New records always carry them.
 */
export type StoredMarket = Omit<Market, 'resolved_by' | 'start_price_e8' | 'end_price_e8'> &
  Partial<Pick<Market, 'resolved_by' | 'start_price_e8' | 'end_price_e8'>>;

export const MarketEnvelope = Type.Object({ market: Market });
export const MarketList = Type.Object({ markets: Type.Array(Market), ...nextCursorProperty });

export const CurrentMarketQuery = StrictObject({
  asset: Type.String({ minLength: 1, maxLength: 16 }),
  duration_secs: SafeInt({ minimum: 1 }),
});
export const LookupMarketQuery = StrictObject({
  asset: Type.String({ minLength: 1, maxLength: 16 }),
  duration_secs: SafeInt({ minimum: 1 }),
  at_ms: Ms,
});
/**
 * A page of GET /v1/mention-markets, in market id order: contract section 13 allows at most 100 a page on a
 * list anyone may call, and 100 is the default.
 */
export const MENTION_LIST_PAGE = { maxLimit: 100, defaultLimit: 100 } as const;
export const MentionMarketsQuery = StrictObject({ status: Type.Optional(MarketStatus), ...pageQueryProperties(MENTION_LIST_PAGE) });

const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });
export const CreateMentionMarket = StrictObject({
  name: Text(200),
  description: Type.Optional(Text(4000)),
  source_kind: Text(64),
  source_event_id: Text(128),
  source_market_id: Text(128),
  betting_closes_at_ms: Ms,
  live_ends_at_ms: Type.Optional(Ms),
  resolution_time_ms: Type.Optional(Ms),
});
export type CreateMentionMarket = Static<typeof CreateMentionMarket>;

export const ResolveMarket = StrictObject({
  outcome: Type.Union([Type.Literal('YES'), Type.Literal('NO'), Type.Literal('VOID')]),
});
export type ResolveOutcome = Static<typeof ResolveMarket>['outcome'];

export const MarketIdParams = StrictObject({ id: MarketId });

/** Admin due list (contract sections 12 and 13): 1..1000 a page, 100 by default. */
export const MAX_DUE_PAGE = 1000;
export const DEFAULT_DUE_PAGE = 100;
export const DueMarketsQuery = StrictObject({
  due: Type.Literal('true', { description: 'only markets whose resolution time has passed and that are unresolved (required)' }),
  ...pageQueryProperties({ maxLimit: MAX_DUE_PAGE, defaultLimit: DEFAULT_DUE_PAGE }),
});
export const DueMarketsPage = Type.Object({ markets: Type.Array(Market), ...nextCursorProperty });
