// Every message of the market-maker socket (contract section 7), both directions, as typebox schemas. The
// gateway validates maker messages with these (compiled once), the SDK and the RFQ engine take their types
// from them, and contract/asyncapi.ts publishes them: one definition, so the document cannot drift.
//
// Each message is a JSON object with a literal `type`; the two unions below are discriminated on it, so a
// `switch (msg.type)` is checked for exhaustiveness. Maker -> server messages are strict (unknown fields are
// refused, contract section 1); server -> maker messages are open, so a later field added by the server
// never breaks a maker that validates what it receives.
import { Kind, Type, TypeRegistry, type Static, type TSchema } from '@sinclair/typebox';
import { Address, Direction, MarketId, Nullable, SafeInt, StrictObject, Uuid } from './common.js';
import { PositiveMicrosString, QuoteId, Seq } from './mm-fields.js';
import { STREAM_MAKER_SCHEMAS, STREAM_SERVER_SCHEMAS } from './mm-stream.js';
import { MAX_LEGS, MIN_LEGS } from './order-codec.js';
import { OrderType } from './rfq.js';

// ---------------------------------------------------------------------------------------------------------
// Field types

/** 32 random bytes as 64 hex chars. Lowercase is what the server sends. */
const NonceHex = Type.String({ pattern: '^[0-9a-f]{64}$', description: '32 random bytes, 64 lowercase hex chars' });

const MessageText = Type.String({ maxLength: 512, description: 'human-readable detail; never parse it' });

/** Upper bound on quoted odds: odds_e4 = odds * 10^4 then stays far inside the u32 of the signed format. */
export const ODDS_MAX = 100_000;
const ODDS_KIND = 'ParlaydOdds';

/**
 * True for a finite number in (1, ODDS_MAX] with at most 4 decimals. round(x * 10^4) / 10^4 is the double
 * nearest to the 4-decimal value, which is exactly what JSON.parse produced if the text had <= 4 decimals;
 * JSON Schema's multipleOf 0.0001 cannot express this (1.85 % 0.0001 !== 0 in binary floating point).
 */
export function isQuoteOdds(value: unknown): value is number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 1 || value > ODDS_MAX) return false;
  return Math.round(value * 10_000) / 10_000 === value;
}

/**
 * odds * 10^4 of odds that passed isQuoteOdds, exactly: the product is within far less than 0.5 of that
 * integer (at most 10^9), so rounding it recovers the 4-decimal value without reading the number's text
 * again (contract/order-codec.ts oddsToE4, which takes any number, gives the same; test/rfq/codec.test.ts).
 */
export function quoteOddsE4(odds: number): number {
  return Math.round(odds * 10_000);
}

// A custom kind, registered once per process, so the compiled validator runs isQuoteOdds; the JSON keywords
// beside it describe the same rule to readers of the AsyncAPI document.
if (!TypeRegistry.Has(ODDS_KIND)) TypeRegistry.Set(ODDS_KIND, (_schema, value) => isQuoteOdds(value));
const Odds = Type.Unsafe<number>({
  [Kind]: ODDS_KIND,
  type: 'number',
  exclusiveMinimum: 1,
  maximum: ODDS_MAX,
  'x-max-decimals': 4,
  description: `decimal payout multiplier, > 1 and <= ${ODDS_MAX}, at most 4 decimals (the server uses odds * 10^4 as an integer)`,
});

// ---------------------------------------------------------------------------------------------------------
// Handshake (interface.md "Market-maker WebSocket flow")

export const AuthChallengeMessage = Type.Object(
  {
    type: Type.Literal('auth_challenge'),
    nonce: NonceHex,
    timestamp: SafeInt({ description: 'server time in Unix seconds; signed as u64 little-endian' }),
  },
  { $id: 'auth_challenge', description: 'First message after connecting. Sign the 75 bytes it defines.' },
);

export const AuthResponseMessage = StrictObject(
  {
    type: Type.Literal('auth_response'),
    address: Type.String({
      pattern: '^(0x)?[0-9a-fA-F]{40}$',
      description: 'registered maker address: EIP-55 checksum or all lowercase; mixed case must pass EIP-55',
    }),
    signature: Type.String({
      pattern: '^(0x)?[0-9a-fA-F]{130}$',
      description: 'EIP-191 personal-sign signature of the 75 challenge bytes: r (32) s (32) v (1), v 0/1 or 27/28',
    }),
  },
  { $id: 'auth_response', description: 'The only message accepted before authentication; one per connection.' },
);

export const AUTH_FAILURE_REASONS = ['INVALID_SIGNATURE', 'UNKNOWN_MAKER', 'CHALLENGE_EXPIRED', 'MALFORMED'] as const;
export type AuthFailureReason = (typeof AUTH_FAILURE_REASONS)[number];

const AuthResultSuccess = Type.Object(
  {
    type: Type.Literal('auth_result'),
    success: Type.Literal(true),
    session_token: Type.String({ description: 'bearer token for maker HTTP routes; secret' }),
    expires_at_ms: SafeInt({ description: 'session end, Unix ms; AUTH_EXPIRED is sent then' }),
  },
  { title: 'auth_result (success)' },
);
const AuthResultFailure = Type.Object(
  {
    type: Type.Literal('auth_result'),
    success: Type.Literal(false),
    reason: Type.Union(AUTH_FAILURE_REASONS.map((r) => Type.Literal(r))),
  },
  { title: 'auth_result (failure)', description: 'The server closes the socket right after.' },
);
export const AuthResultMessage = Type.Union([AuthResultSuccess, AuthResultFailure], { $id: 'auth_result' });

// ---------------------------------------------------------------------------------------------------------
// Liveness and session

export const HeartbeatMessage = Type.Object(
  { type: Type.Literal('heartbeat'), seq: Seq, ts: SafeInt({ description: 'server time, Unix ms' }) },
  { $id: 'heartbeat', description: 'Sent every heartbeat interval (15 s); answer with pong.' },
);

export const PongMessage = StrictObject(
  { type: Type.Literal('pong'), ts: SafeInt({ description: 'the ts of the heartbeat being answered' }) },
  { $id: 'pong', description: 'Answer to heartbeat. Three heartbeats in a row without a pong close the socket.' },
);

export const AuthExpiredMessage = Type.Object(
  {
    type: Type.Literal('AUTH_EXPIRED'),
    seq: Seq,
    expired_at_ms: SafeInt({ description: 'when the session ended, Unix ms' }),
  },
  { $id: 'AUTH_EXPIRED', description: 'The 1 h session ended; the server closes the socket. Reconnect and authenticate.' },
);

// ---------------------------------------------------------------------------------------------------------
// RFQ flow (contract sections 6 and 7)

const RfqLeg = Type.Object({ market_id: MarketId, direction: Direction });
const Taker = Type.Object({ address: Address, tier: SafeInt({ description: 'taker tier' }) });

export const RfqMessage = Type.Object(
  {
    type: Type.Literal('rfq'),
    seq: Seq,
    request_id: Uuid,
    legs: Type.Array(RfqLeg, { minItems: MIN_LEGS, maxItems: MAX_LEGS }),
    wager_micros: PositiveMicrosString,
    order_type: OrderType,
    quote_deadline_ms: SafeInt({ description: 'quotes after this Unix ms are not considered' }),
    expires_at_ms: SafeInt({ description: 'the order deadline, Unix ms' }),
    taker: Nullable(Taker),
  },
  { $id: 'rfq', description: 'A request for quote, sent to every authenticated maker. taker is null when shielded.' },
);

export const QuoteMessage = StrictObject(
  {
    type: Type.Literal('quote'),
    request_id: Uuid,
    quote_id: QuoteId,
    odds: Odds,
    max_wager_micros: PositiveMicrosString,
    last_look: Type.Optional(
      Type.Boolean({ default: false, description: 'true: the maker confirms with last_look_response before a fill' }),
    ),
  },
  { $id: 'quote', description: 'A price for an rfq. Answered by quote_ack or quote_reject.' },
);

export const DeclineMessage = StrictObject(
  { type: Type.Literal('decline'), request_id: Uuid },
  { $id: 'decline', description: 'The maker will not quote this rfq (lets the RFQ close early).' },
);

export const QuoteCancelMessage = StrictObject(
  { type: Type.Literal('quote_cancel'), request_id: Uuid, quote_id: QuoteId },
  {
    $id: 'quote_cancel',
    description: 'Withdraws a quote that was not yet selected. Answered by quote_cancelled or error QUOTE_NOT_FOUND.',
  },
);

export const QuoteAckMessage = Type.Object(
  {
    type: Type.Literal('quote_ack'),
    seq: Seq,
    request_id: Uuid,
    quote_id: QuoteId,
    received_at_ms: SafeInt({ description: 'when the service read the quote from the socket, Unix ms' }),
  },
  { $id: 'quote_ack', description: 'The quote was accepted for selection; it stands until its rfq_result, a cancel or a disconnect.' },
);

/**
 * Why a quote was refused, with what each means to the maker: the one list the RFQ engine, the desk and the
 * AsyncAPI document (x-quote-reject-reasons) take them from.
 */
export const QUOTE_REJECT_REASONS = {
  INVALID_ODDS: 'odds of 1 or less pay the taker nothing over the stake',
  RFQ_CLOSED: 'the rfq is unknown or no longer takes quotes (ended, or past its quote deadline)',
  NOT_IN_AUDIENCE: 'this connection was not sent the rfq',
  OWN_RFQ: "the rfq is the maker's own wallet's; counts as a decline",
  DUPLICATE_QUOTE_ID: 'a quote with this quote_id already stands on the rfq',
  QUOTE_LIMIT: 'the maker already has 16 quotes standing on the rfq (a quote_cancel frees a place)',
  MAX_WAGER_NOT_POSITIVE: 'max_wager_micros is not positive',
  INSUFFICIENT_COLLATERAL: "the quote's liability exceeds the maker's available balance; counts as a decline",
  PROTECTION_TRIPPED: 'a protection limit tripped: quotes are refused until protection_reset',
} as const satisfies Record<string, string>;
export type QuoteRejectReason = keyof typeof QUOTE_REJECT_REASONS;
export const QuoteRejectReason = Type.Union(
  (Object.keys(QUOTE_REJECT_REASONS) as QuoteRejectReason[]).map((r) => Type.Literal(r)),
  { description: 'why the quote was refused (x-quote-reject-reasons)' },
);

export const QuoteRejectMessage = Type.Object(
  {
    type: Type.Literal('quote_reject'),
    seq: Seq,
    request_id: Uuid,
    quote_id: QuoteId,
    reason: QuoteRejectReason,
  },
  { $id: 'quote_reject', description: 'The quote was refused (unknown or closed rfq, late, invalid).' },
);

export const LastLookMessage = Type.Object(
  {
    type: Type.Literal('last_look'),
    seq: Seq,
    request_id: Uuid,
    quote_id: QuoteId,
    fill_wager_micros: PositiveMicrosString,
    deadline_ms: SafeInt({ description: 'answer before this Unix ms; silence counts as reject' }),
  },
  { $id: 'last_look', description: 'The quote (sent with last_look: true) was selected; confirm or reject.' },
);

export const LastLookResponseMessage = StrictObject(
  { type: Type.Literal('last_look_response'), request_id: Uuid, quote_id: QuoteId, accept: Type.Boolean() },
  { $id: 'last_look_response', description: 'Confirms (accept: true) or rejects the fill of a last_look.' },
);

export const RFQ_OUTCOMES = ['won', 'lost', 'expired', 'cancelled'] as const;
export const RfqResultMessage = Type.Object(
  {
    type: Type.Literal('rfq_result'),
    seq: Seq,
    request_id: Uuid,
    outcome: Type.Union(RFQ_OUTCOMES.map((o) => Type.Literal(o))),
    quote_id: Type.Optional(QuoteId),
    odds: Type.Optional(Type.Number({ description: 'winner only: the filled odds' })),
    filled_wager_micros: Type.Optional(PositiveMicrosString),
  },
  {
    $id: 'rfq_result',
    description:
      'End of an rfq for this maker. quote_id, odds and filled_wager_micros only for the winner; a loser learns only that it lost.',
  },
);

export const ErrorMessage = Type.Object(
  {
    type: Type.Literal('error'),
    seq: Seq,
    code: Type.String({ pattern: '^[A-Z][A-Z0-9_]*$', description: 'UPPER_SNAKE error code (docs/maker-protocol.md)' }),
    message: MessageText,
    request_id: Type.Optional(Type.String({ maxLength: 64, description: 'request_id of the offending message, when it had one' })),
    quote_id: Type.Optional(Type.String({ maxLength: 64, description: 'quote_id of the offending message, when it had one' })),
    details: Type.Optional(Type.Array(Type.Object({ path: Type.String(), message: Type.String() }), { maxItems: 10 })),
  },
  { $id: 'error', description: 'A malformed or out-of-turn message. The socket stays open unless the code says it closes.' },
);

// ---------------------------------------------------------------------------------------------------------
// Unions and types

/** Every message a maker may send, in the order of the protocol. */
export const MAKER_TO_SERVER_SCHEMAS = [
  AuthResponseMessage,
  PongMessage,
  QuoteMessage,
  DeclineMessage,
  QuoteCancelMessage,
  LastLookResponseMessage,
  ...STREAM_MAKER_SCHEMAS,
] as const;

/** Every message the server sends. */
export const SERVER_TO_MAKER_SCHEMAS = [
  AuthChallengeMessage,
  AuthResultMessage,
  HeartbeatMessage,
  AuthExpiredMessage,
  RfqMessage,
  QuoteAckMessage,
  QuoteRejectMessage,
  LastLookMessage,
  RfqResultMessage,
  ErrorMessage,
  ...STREAM_SERVER_SCHEMAS,
] as const;

export const MakerToServerMessage = Type.Union([...MAKER_TO_SERVER_SCHEMAS]);
export const ServerToMakerMessage = Type.Union([...SERVER_TO_MAKER_SCHEMAS]);

export type AuthChallengeMessage = Static<typeof AuthChallengeMessage>;
export type AuthResponseMessage = Static<typeof AuthResponseMessage>;
export type AuthResultMessage = Static<typeof AuthResultMessage>;
export type HeartbeatMessage = Static<typeof HeartbeatMessage>;
export type PongMessage = Static<typeof PongMessage>;
export type AuthExpiredMessage = Static<typeof AuthExpiredMessage>;
export type RfqMessage = Static<typeof RfqMessage>;
export type QuoteMessage = Static<typeof QuoteMessage>;
export type DeclineMessage = Static<typeof DeclineMessage>;
export type QuoteCancelMessage = Static<typeof QuoteCancelMessage>;
export type QuoteAckMessage = Static<typeof QuoteAckMessage>;
export type QuoteRejectMessage = Static<typeof QuoteRejectMessage>;
export type LastLookMessage = Static<typeof LastLookMessage>;
export type LastLookResponseMessage = Static<typeof LastLookResponseMessage>;
export type RfqResultMessage = Static<typeof RfqResultMessage>;
export type ErrorMessage = Static<typeof ErrorMessage>;
export type MakerToServerMessage = Static<typeof MakerToServerMessage>;
export type ServerToMakerMessage = Static<typeof ServerToMakerMessage>;

export type MakerMessageType = MakerToServerMessage['type'];
export type ServerMessageType = ServerToMakerMessage['type'];

/** The `type` literal of a message schema (every schema above has one, directly or in each union member). */
export function messageTypeOf(schema: TSchema): string {
  const member = (schema['anyOf'] as TSchema[] | undefined)?.[0] ?? schema;
  const literal = (member['properties'] as Record<string, TSchema> | undefined)?.['type']?.['const'];
  if (typeof literal !== 'string') throw new TypeError('message schema without a type literal');
  return literal;
}
