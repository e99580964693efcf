// The money views of contract section 11 ("Views"): a user's positions and journal, a maker's fills. Each is a
// list paged by the one convention (contract/paging.ts, contract section 13).
import { Type, type Static } from '@sinclair/typebox';
import { nextCursorProperty, pageQueryProperties } from './paging.js';
import type { Bucket, TransferKind } from './ledger-kinds.js';
import { Direction, MarketId, MicrosString, Nullable, StrictObject, Uuid } from './common.js';
import { MarketStatus } from './markets.js';

/** Lists of the caller's own records: like the history lists (contract/history.ts), 1..100 a page, 50 by default. */
export const VIEWS_PAGE = { maxLimit: 100, defaultLimit: 50 } as const;

/** A scan bound of a filtered page: rows (index rows of RFQs, or fills) read at most per page (as rfq/history.ts). */
export const VIEWS_SCAN_MAX = 1000;

const SignedMicros = Type.String({ pattern: '^-?[0-9]+$', description: 'decimal integer string of micros, negative for money out' });
const Ms = Type.Integer({ minimum: 0, description: 'Unix ms' });

export const PositionLeg = Type.Object(
  {
    market_id: MarketId,
    direction: Direction,
    market_status: MarketStatus,
    outcome: Nullable(
      Type.Union([Type.Literal('YES'), Type.Literal('NO'), Type.Literal('VOID')], {
        description: "the market's outcome once resolved, VOID once voided, null while open",
      }),
    ),
  },
  { $id: 'PositionLeg' },
);
export type PositionLeg = Static<typeof PositionLeg>;

/** open: not yet settled; settled: paid (won, lost or voided). */
export const SettledFilter = Type.Union([Type.Literal('open'), Type.Literal('settled')]);
export type SettledFilter = Static<typeof SettledFilter>;

export const PositionsQuery = StrictObject({ status: Type.Optional(SettledFilter), ...pageQueryProperties(VIEWS_PAGE) });
export const Position = Type.Object(
  {
    request_id: Uuid,
    created_at_ms: Ms,
    legs: Type.Array(PositionLeg),
    filled_wager_micros: MicrosString,
    odds: Type.Number(),
    payout_micros: MicrosString,
    status: Type.Union([Type.Literal('open'), Type.Literal('won'), Type.Literal('lost'), Type.Literal('voided')]),
    paid_micros: Nullable(MicrosString),
    settled_at_ms: Nullable(
      Type.Integer({
        minimum: 0,
        description: 'null while open, and for a position settled before the money model (schema 5), which kept no time',
      }),
    ),
  },
  { $id: 'Position', description: 'A filled RFQ of the caller: its stake, and once settled what it paid (0 when lost)' },
);
export type Position = Static<typeof Position>;
export const PositionList = Type.Object(
  { positions: Type.Array(Position), ...nextCursorProperty },
  {
    description:
      `Newest first (by created_at_ms). A page reads at most ${VIEWS_SCAN_MAX} of the caller's RFQs (any status): ` +
      'past that it comes back short, possibly empty, with a next_cursor to go on from',
  },
);

const TRANSFER_KINDS = [
  'credit',
  'reserve',
  'release',
  'fill',
  'lock',
  'settle_stake',
  'settle_liability',
  'pool',
  'collect',
  'prize',
  'pool_return',
  'withdraw',
  'withdraw_complete',
  'withdraw_fail',
  'opening',
] as const satisfies readonly TransferKind[];
const BUCKETS = ['available', 'reserved', 'at_risk', 'pending_withdrawal', 'locked', 'committed'] as const satisfies readonly Bucket[];
// Fails to compile when records/ledger.ts gains a kind or a bucket that the wire schema does not list.
const everyKindListed: Exclude<TransferKind, (typeof TRANSFER_KINDS)[number]> extends never ? true : never = true;
const everyBucketListed: Exclude<Bucket, (typeof BUCKETS)[number]> extends never ? true : never = true;
void everyKindListed;
void everyBucketListed;

export const JournalQuery = StrictObject({ ...pageQueryProperties(VIEWS_PAGE) });
export const JournalEntry = Type.Object(
  {
    transfer_id: Type.String({ description: '`<ref>/<step>`: unique per movement' }),
    kind: Type.Union(TRANSFER_KINDS.map((k) => Type.Literal(k))),
    bucket: Type.Union(BUCKETS.map((b) => Type.Literal(b))),
    delta_micros: SignedMicros,
    ref: Type.String({ description: '`rfq:<id>`, `contest:<id>:…`, `credit:<key>`, `withdrawal:<id>`' }),
    at_ms: Ms,
  },
  { $id: 'JournalEntry', description: "What one transfer did to one of the caller's buckets" },
);
export type JournalEntry = Static<typeof JournalEntry>;
export const JournalList = Type.Object(
  { entries: Type.Array(JournalEntry), ...nextCursorProperty },
  {
    description:
      "Newest first (by at_ms, then transfer id, descending); a transfer between two of the caller's own buckets gives two " +
      'entries, in debit-then-credit order, which a page boundary may split',
  },
);

export const MakerFillsQuery = StrictObject({ status: Type.Optional(SettledFilter), ...pageQueryProperties(VIEWS_PAGE) });
export const MakerFill = Type.Object(
  {
    request_id: Uuid,
    quote_id: Nullable(Type.String({ description: 'null for a fill made before the money model (schema 5), which did not keep it' })),
    taker: Type.String({ description: 'taker address, or a stable opaque id (per maker) for a shielded fill, as in taker_pnl' }),
    legs: Type.Array(PositionLeg),
    filled_wager_micros: MicrosString,
    odds: Type.Number(),
    payout_micros: MicrosString,
    liability_micros: MicrosString,
    status: Type.Union([Type.Literal('open'), Type.Literal('taker_won'), Type.Literal('taker_lost'), Type.Literal('voided')]),
    maker_pnl_micros: Nullable(
      Type.String({
        pattern: '^-?[0-9]+$',
        description:
          "null while open; else the maker's result, filled wager − paid: +filled wager when the taker lost, −liability when it won, 0 voided",
      }),
    ),
    settled_at_ms: Nullable(
      Type.Integer({ minimum: 0, description: 'null while open, and for a fill settled before the money model (schema 5)' }),
    ),
  },
  { $id: 'MakerFill' },
);
export type MakerFill = Static<typeof MakerFill>;
export const MakerFillList = Type.Object(
  { fills: Type.Array(MakerFill), ...nextCursorProperty },
  {
    description:
      "Newest first by the RFQ's creation time, the time its request id carries (request ids made before ids carried a time " +
      `come in id order). A page reads at most ${VIEWS_SCAN_MAX} fills: with a status filter it may come back short, ` +
      'possibly empty, with a next_cursor to go on from',
  },
);
