// Field types shared by the maker socket's message schemas (contract/mm.ts, contract/mm-stream.ts).
import { Type } from '@sinclair/typebox';
import { SafeInt } from './common.js';

/** Positive decimal integer string of USDC micros; at most 19 digits, so it always fits a u64. */
export const PositiveMicrosString = Type.String({
  pattern: '^[1-9][0-9]{0,18}$',
  description: 'positive decimal integer string of USDC micros',
});

/** The maker's own id for a quote; echoed back in quote_ack / quote_reject / last_look / rfq_result. */
export const QuoteId = Type.String({ minLength: 1, maxLength: 64, description: "the maker's own quote id" });

/**
 * Position of a server message in its stream: every message after a successful auth_result
 * carries one, gapless from 1 per socket. Optional in the schemas only because the handshake messages
 * before it have none.
 */
export const Seq = Type.Optional(SafeInt({ minimum: 1, description: "position in this socket's stream, gapless from 1" }));
