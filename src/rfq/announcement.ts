// Inside an RFQ shard. The `rfq` frame that tells the makers of a new RFQ (contract section 7), and the times
// it carries: the shard that accepted the RFQ mints them and has the frame sent (shard.ts persistNew).
import type { RfqMessage } from '../contract/mm.js';
import type { CreateRfq, ShardInit } from './messages.js';

export interface RfqTimes {
  createdAtMs: number;
  /** Quotes are taken until then (the quote window, never past a signed order's own deadline). */
  quoteDeadlineMs: number;
  expiresAtMs: number;
}

export function rfqTimes(
  command: Pick<CreateRfq, 'rfqKind' | 'expiresAtMs'>,
  nowMs: number,
  windows: Pick<ShardInit, 'quoteWindowMs' | 'lastLookMs'>,
): RfqTimes {
  const quoteDeadlineMs =
    command.rfqKind === 'signed' ? Math.min(nowMs + windows.quoteWindowMs, command.expiresAtMs) : nowMs + windows.quoteWindowMs;
  return {
    createdAtMs: nowMs,
    quoteDeadlineMs,
    // Unsigned RFQs have no deadline of their own: the quote window and one last look bound them.
    expiresAtMs: command.rfqKind === 'signed' ? command.expiresAtMs : quoteDeadlineMs + windows.lastLookMs,
  };
}

/** The quote_deadline_ms an RFQ's makers were told, from its record (as rfqTimes minted it). */
export function quoteDeadlineOf(
  record: { kind: CreateRfq['rfqKind']; createdAtMs: number; expiresAtMs: number },
  windows: Pick<ShardInit, 'quoteWindowMs'>,
): number {
  const windowEndMs = record.createdAtMs + windows.quoteWindowMs;
  return record.kind === 'signed' ? Math.min(windowEndMs, record.expiresAtMs) : windowEndMs;
}

export function toRfqMessage(
  requestId: string,
  command: Pick<CreateRfq, 'legs' | 'wagerMicros' | 'orderType' | 'isShielded' | 'wallet' | 'tier'>,
  times: RfqTimes,
): RfqMessage {
  return {
    type: 'rfq',
    request_id: requestId,
    legs: command.legs.map((leg) => ({ market_id: leg.marketId, direction: leg.direction })),
    wager_micros: command.wagerMicros,
    order_type: command.orderType,
    quote_deadline_ms: times.quoteDeadlineMs,
    expires_at_ms: times.expiresAtMs,
    taker: command.isShielded ? null : { address: command.wallet, tier: command.tier },
  };
}
