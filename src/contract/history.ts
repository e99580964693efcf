// The caller's history (contract section 13): GET /v1/user/rfqs and GET /v1/user/contest_entries, paged by
// the one convention (contract/paging.ts).
import { Type, type Static } from '@sinclair/typebox';
import { nextCursorProperty, pageQueryProperties } from './paging.js';
import { MicrosString, Nullable, StrictObject, Uuid } from './common.js';
import { CallerEntry, GameType } from './contests.js';
import { Leg, RfqResult, RfqStatus } from './rfq.js';

/** Lists of the caller's own records: a page needs a token and reads at most its index rows (history.ts). */
export const USER_HISTORY_PAGE = { maxLimit: 100, defaultLimit: 50 } as const;

export const UserRfqsQuery = StrictObject({ status: Type.Optional(RfqStatus), ...pageQueryProperties(USER_HISTORY_PAGE) });
export type UserRfqsQuery = Static<typeof UserRfqsQuery>;

export const UserRfq = Type.Composite(
  [RfqResult, Type.Object({ created_at_ms: Type.Integer(), legs: Type.Array(Leg), wager_micros: MicrosString })],
  { $id: 'UserRfq', description: "An RFQ as stored: an active one shows 'pending' here (GET /v1/rfq/{id} has its live status)" },
);
export type UserRfq = Static<typeof UserRfq>;
export const UserRfqList = Type.Object({ rfqs: Type.Array(UserRfq), ...nextCursorProperty });

export const UserEntriesQuery = StrictObject({ contest_id: Type.Optional(Uuid), ...pageQueryProperties(USER_HISTORY_PAGE) });
export type UserEntriesQuery = Static<typeof UserEntriesQuery>;

export const EntryState = Type.Union([Type.Literal('open'), Type.Literal('eliminated'), Type.Literal('settled')], {
  description: 'settled once its contest paid or refunded it; eliminated: a survivor or streak entry with a lost pick; else open',
});
/**
 * The list is the contract's own (interface.md has no such route), so its money fields are decimal integer
 * strings (contract section 1), where the contest detail's caller entries are the interface's int64 numbers.
 */
export const UserEntry = Type.Composite(
  [
    Type.Object({
      contest_id: Uuid,
      game_type: GameType,
      state: EntryState,
      stake_micros: MicrosString,
      payout_micros: Nullable(MicrosString),
      net_payout_micros: Nullable(MicrosString),
    }),
    Type.Omit(CallerEntry, ['payout_micros', 'net_payout_micros']),
  ],
  { $id: 'UserEntry' },
);
export type UserEntry = Static<typeof UserEntry>;
export const UserEntryList = Type.Object({ entries: Type.Array(UserEntry), ...nextCursorProperty });
