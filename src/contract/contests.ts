// Contest request and response schemas (interface.md "Contest entry request/response", "Contest detail";
// contract section 8). Field names, types and nullability follow interface.md exactly: money in the detail is
// int64 JSON numbers, reserved_micros in the entry response is a decimal string.
import { Type, type Static } from '@sinclair/typebox';
import { Direction, MarketId, Micros, MicrosString, Nullable, SafeInt, StrictObject, Uuid, UuidInput } from './common.js';
import { MarketStatus, Outcome } from './markets.js';
import { nextCursorProperty, pageQueryProperties } from './paging.js';

const Ms = SafeInt({ description: 'Unix ms' });
const Int32 = (minimum: number, maximum: number) => Type.Integer({ minimum, maximum });

/** Limits (STYLE: put a limit on everything). */
export const CONTEST_LIMITS = {
  /** Markets in one contest. */
  maxMarkets: 64,
  /** The most bet_type's value may be. */
  maxPicks: 64,
  /**
   * Picks a contest_bet body may list: a bound on parsing and checking only, past any contest's rule (at
   * most maxPicks), so that a count the rule refuses is 422 INVALID_PICKS (rules.ts), not 400. The 64 KiB
   * body holds ~1,700 picks at most anyway.
   */
  maxBodyPicks: 1024,
  maxEntryCap: 1_000_000,
  maxSplitPlaces: 100,
  /** Decoded image bytes (contract section 8). */
  maxImageBytes: 1024 * 1024,
  /** base64 length of maxImageBytes. */
  maxImageBase64Chars: Math.ceil((1024 * 1024) / 3) * 4,
} as const;

export const ContestCategory = Type.Union([Type.Literal('mentions'), Type.Literal('sports'), Type.Literal('culture')]);
export type ContestCategory = Static<typeof ContestCategory>;
export const ContestStatus = Type.Union([Type.Literal('open'), Type.Literal('resolved'), Type.Literal('voided')]);
export type ContestStatus = Static<typeof ContestStatus>;
export const GameType = Type.Union([Type.Literal('lineups'), Type.Literal('outcast'), Type.Literal('survivor'), Type.Literal('streak')]);
export type GameType = Static<typeof GameType>;
export const BetType = StrictObject(
  {
    kind: Type.Union([Type.Literal('num_bets'), Type.Literal('bets_per_category')]),
    value: Int32(1, CONTEST_LIMITS.maxPicks),
  },
  { $id: 'ContestBetType' },
);
export type BetType = Static<typeof BetType>;
export const PickOutcome = Type.Union([Type.Literal('pending'), Type.Literal('won'), Type.Literal('lost'), Type.Literal('voided')]);
export type PickOutcome = Static<typeof PickOutcome>;
export const ImageContentType = Type.Union([Type.Literal('image/png'), Type.Literal('image/jpeg'), Type.Literal('image/webp')]);
export type ImageContentType = Static<typeof ImageContentType>;

/** Per-contest category label of a market (bets_per_category counts picks per label). */
const CategoryLabel = Type.String({ minLength: 1, maxLength: 64, pattern: '^\\S(.*\\S)?$' });
const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength });

// ---- admin ----

export const CreateContest = StrictObject({
  title: Text(200),
  category: ContestCategory,
  bet_amount_micros: SafeInt({ minimum: 1, description: 'entry amount, USDC micros' }),
  protocol_prize_pool_micros: Micros('prize pool funded by the protocol, USDC micros'),
  entry_cap: Int32(1, CONTEST_LIMITS.maxEntryCap),
  entry_opens_at_ms: Type.Optional(Ms),
  betting_closes_ms: Ms,
  live_ends_at_ms: Type.Optional(Ms),
  description: Type.Optional(Text(4000)),
  bet_type: BetType,
  game_type: GameType,
  /** Lineups only (places 1..n); omitted or [] for the other game types. */
  winning_split_bps: Type.Optional(
    Type.Array(Int32(0, 10_000), { maxItems: CONTEST_LIMITS.maxSplitPlaces, description: 'sum at most 10000' }),
  ),
  markets: Type.Array(StrictObject({ market_id: MarketId, category: CategoryLabel }), {
    minItems: 1,
    maxItems: CONTEST_LIMITS.maxMarkets,
  }),
  image: Type.Optional(
    StrictObject({
      /** When given it must match the type found from the magic bytes. */
      content_type: Type.Optional(ImageContentType),
      base64: Type.String({
        minLength: 4,
        maxLength: CONTEST_LIMITS.maxImageBase64Chars,
        pattern: '^[A-Za-z0-9+/]+={0,2}$',
      }),
    }),
  ),
});
export type CreateContest = Static<typeof CreateContest>;

export const ContestIdParams = StrictObject({ id: Uuid });

// ---- detail ----

export const ContestMarket = Type.Object(
  {
    market_id: MarketId,
    category: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    status: MarketStatus,
    outcome: Nullable(Outcome),
    source_kind: Nullable(Type.String()),
    source_event_id: Nullable(Type.String()),
    source_market_id: Nullable(Type.String()),
    betting_closes_at_ms: Nullable(Ms),
    live_ends_at_ms: Nullable(Ms),
    resolution_time_ms: Nullable(Ms),
  },
  { additionalProperties: false, $id: 'ContestMarket' },
);
export type ContestMarket = Static<typeof ContestMarket>;

const SignedMicros = Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER });

export const CallerEntry = Type.Object(
  {
    entry_index: Int32(0, 2_147_483_647),
    created_at_ms: Ms,
    picks: Type.Array(Type.Object({ market_id: MarketId, direction: Direction, outcome: PickOutcome }, { additionalProperties: false })),
    open_leg_count: Int32(0, 2_147_483_647),
    resolved_win_count: Int32(0, 2_147_483_647),
    payout_micros: Nullable(Micros()),
    net_payout_micros: Nullable(SignedMicros),
    rank: Nullable(Int32(1, 2_147_483_647)),
  },
  { additionalProperties: false, $id: 'ContestCallerEntry' },
);
export type CallerEntry = Static<typeof CallerEntry>;

export const ContestCaller = Type.Object(
  { joined: Type.Boolean(), entries: Type.Array(CallerEntry) },
  { additionalProperties: false, $id: 'ContestCaller' },
);
export type ContestCaller = Static<typeof ContestCaller>;

export const ContestDetail = Type.Object(
  {
    contest_id: Uuid,
    title: Type.String(),
    category: ContestCategory,
    status: ContestStatus,
    bet_amount_micros: Micros(),
    protocol_prize_pool_micros: Micros(),
    total_pot_micros: Micros(),
    entries_filled: Int32(0, 2_147_483_647),
    entry_cap: Int32(1, 2_147_483_647),
    entry_opens_at_ms: Nullable(Ms),
    betting_closes_ms: Ms,
    live_ends_at_ms: Nullable(Ms),
    resolved_at_ms: Nullable(Ms),
    created_at_ms: Ms,
    image_url: Type.String(),
    description: Nullable(Type.String()),
    bet_type: BetType,
    game_type: GameType,
    winning_split_bps: Type.Array(Int32(0, 10_000)),
    markets: Type.Array(ContestMarket),
    caller: Nullable(ContestCaller),
  },
  { additionalProperties: false, $id: 'ContestDetail' },
);
export type ContestDetail = Static<typeof ContestDetail>;

// ---- list ----

/** Contract section 8 writes the list as `?status=&category=`: an empty value is no filter, as if absent. */
const NoFilter = Type.Literal('', { description: 'empty: no filter' });
/**
 * A page of GET /v1/contests: contract section 13 allows at most 100 a page on a list anyone may call, and
 * 100 is also the default (a client that never sends `limit` gets as much as any other).
 */
export const CONTEST_LIST_PAGE = { maxLimit: 100, defaultLimit: 100 } as const;
export const ContestListQuery = StrictObject({
  status: Type.Optional(Type.Union([ContestStatus, NoFilter])),
  category: Type.Optional(Type.Union([ContestCategory, NoFilter])),
  ...pageQueryProperties(CONTEST_LIST_PAGE),
});

export const ContestSummary = Type.Object(
  {
    contest_id: Uuid,
    title: Type.String(),
    category: ContestCategory,
    status: ContestStatus,
    game_type: GameType,
    bet_type: BetType,
    bet_amount_micros: Micros(),
    total_pot_micros: Micros(),
    entries_filled: Int32(0, 2_147_483_647),
    entry_cap: Int32(1, 2_147_483_647),
    betting_closes_ms: Ms,
    image_url: Type.String(),
    created_at_ms: Ms,
  },
  { additionalProperties: false, $id: 'ContestSummary' },
);
export type ContestSummary = Static<typeof ContestSummary>;
export const ContestList = Type.Object({ contests: Type.Array(ContestSummary), ...nextCursorProperty });

// ---- entry ----

export const ContestPick = StrictObject({ market_id: MarketId, direction: Direction });
export type ContestPick = Static<typeof ContestPick>;

export const ContestEntryRequest = StrictObject({
  contest_id: Uuid,
  entry_index: Type.Optional(Int32(0, 2_147_483_647)),
  /** No minItems: an empty list breaks the bet_type count rule, 422 INVALID_PICKS (contract section 2). */
  bets: Type.Array(ContestPick, { maxItems: CONTEST_LIMITS.maxBodyPicks }),
  /** Contract section 13: the same key and content again answers the same entry (200); other content is 409. */
  idempotency_key: Type.Optional(UuidInput),
});
export type ContestEntryRequest = Static<typeof ContestEntryRequest>;

export const ContestEntryResponse = Type.Object(
  { contest_id: Uuid, entry_index: Int32(0, 2_147_483_647), reserved_micros: MicrosString },
  { additionalProperties: false, $id: 'ContestEntryResponse' },
);
export type ContestEntryResponse = Static<typeof ContestEntryResponse>;

/** Content of GET /v1/contests/{id}/image: the image bytes themselves. */
export const ContestImageBody = Type.String({ contentEncoding: 'binary' });
