// The maker socket's messages beyond the core ones of contract/mm.ts (which joins them into its
// unions): resuming a stream, the quote book's cancels, and protection. Same rules: maker -> server strict,
// server -> maker open.
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, SafeInt, StrictObject, Uuid } from './common.js';
import { QuoteId, Seq } from './mm-fields.js';

// ---------------------------------------------------------------------------------------------------------
// Resume (docs/maker-protocol.md section 3.5)

export const ResumeMessage = StrictObject(
  {
    type: Type.Literal('resume'),
    session_token: Type.String({ minLength: 1, maxLength: 256, description: 'the session token of the socket whose stream is resumed' }),
    last_seq: SafeInt({ description: 'the last seq read on that socket (0: none)' }),
  },
  {
    $id: 'resume',
    description: 'After auth_result: replay what the named stream sent after last_seq. Answered by resumed or resume_failed.',
  },
);

export const ResumedMessage = Type.Object(
  {
    type: Type.Literal('resumed'),
    seq: Seq,
    replayed: SafeInt({ description: 'frames of the old stream re-sent on this socket, just before this message' }),
    next_seq: SafeInt({ description: 'the seq of the next message on this socket' }),
  },
  { $id: 'resumed', description: 'The replay is complete; the old stream is retired and continues on this socket.' },
);

export const RESUME_FAILURE_REASONS = ['UNKNOWN_SESSION', 'SEQ_TOO_OLD', 'SEQ_AHEAD'] as const;
export const ResumeFailedMessage = Type.Object(
  {
    type: Type.Literal('resume_failed'),
    seq: Seq,
    reason: Type.Union(RESUME_FAILURE_REASONS.map((r) => Type.Literal(r))),
    oldest_seq: Nullable(SafeInt({ description: 'the oldest seq the named stream still holds; null when it holds none' })),
  },
  {
    $id: 'resume_failed',
    description:
      'Nothing was replayed. UNKNOWN_SESSION: no stream of yours under that token (expired, another maker, never seen, or dropped); ' +
      'SEQ_TOO_OLD: messages after last_seq are no longer held (re-pull your state); SEQ_AHEAD: last_seq was never sent.',
  },
);

// ---------------------------------------------------------------------------------------------------------
// Quote book

export const QuoteCancelAllMessage = StrictObject(
  { type: Type.Literal('quote_cancel_all') },
  { $id: 'quote_cancel_all', description: 'Withdraws every standing quote of this maker (all its sockets). Answered by quotes_cancelled.' },
);

export const QuoteCancelledMessage = Type.Object(
  { type: Type.Literal('quote_cancelled'), seq: Seq, request_id: Uuid, quote_id: QuoteId },
  { $id: 'quote_cancelled', description: 'The quote was withdrawn: it can no longer fill.' },
);

export const QuotesCancelledMessage = Type.Object(
  { type: Type.Literal('quotes_cancelled'), seq: Seq, count: SafeInt({ description: 'standing quotes withdrawn' }) },
  {
    $id: 'quotes_cancelled',
    description: 'Answer to quote_cancel_all. A quote already selected for a fill is not withdrawn (its rfq_result tells).',
  },
);

// ---------------------------------------------------------------------------------------------------------
// Protection

export const PROTECTION_TRIP_REASONS = ['MAX_FILLS', 'MAX_FILLED_WAGER', 'MAX_LOCKED'] as const;
export type ProtectionTripReason = (typeof PROTECTION_TRIP_REASONS)[number];

export const ProtectionTrippedMessage = Type.Object(
  {
    type: Type.Literal('protection_tripped'),
    seq: Seq,
    reason: Type.Union(PROTECTION_TRIP_REASONS.map((r) => Type.Literal(r))),
  },
  {
    $id: 'protection_tripped',
    description:
      'A fill reached a protection limit: standing quotes were withdrawn and new ones get quote_reject PROTECTION_TRIPPED until protection_reset.',
  },
);

export const ProtectionResetMessage = StrictObject(
  { type: Type.Literal('protection_reset') },
  { $id: 'protection_reset', description: 'Lifts a tripped protection and starts its counts afresh. Answered by protection_reset_ok.' },
);

export const ProtectionResetOkMessage = Type.Object(
  { type: Type.Literal('protection_reset_ok'), seq: Seq },
  { $id: 'protection_reset_ok', description: 'Quotes are taken again.' },
);

export const STREAM_MAKER_SCHEMAS = [ResumeMessage, QuoteCancelAllMessage, ProtectionResetMessage] as const;
export const STREAM_SERVER_SCHEMAS = [
  ResumedMessage,
  ResumeFailedMessage,
  QuoteCancelledMessage,
  QuotesCancelledMessage,
  ProtectionTrippedMessage,
  ProtectionResetOkMessage,
] as const;

export type ResumeMessage = Static<typeof ResumeMessage>;
export type ResumedMessage = Static<typeof ResumedMessage>;
export type ResumeFailedMessage = Static<typeof ResumeFailedMessage>;
export type QuoteCancelAllMessage = Static<typeof QuoteCancelAllMessage>;
export type QuoteCancelledMessage = Static<typeof QuoteCancelledMessage>;
export type QuotesCancelledMessage = Static<typeof QuotesCancelledMessage>;
export type ProtectionTrippedMessage = Static<typeof ProtectionTrippedMessage>;
export type ProtectionResetMessage = Static<typeof ProtectionResetMessage>;
export type ProtectionResetOkMessage = Static<typeof ProtectionResetOkMessage>;
