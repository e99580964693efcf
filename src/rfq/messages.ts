// Both threads. Every message between the main thread and an RFQ shard worker, declared once, as a
// discriminated union per direction, so `switch (msg.kind)` is checked for exhaustiveness. Messages travel
// in batches (arrays) flushed once per event-loop turn (src/batcher.ts). Money crosses as decimal strings.
import type { RfqResult } from '../schemas/rfq.js';
import type { RfqMessage, ServerToMakerMessage } from '../schemas/mm.js';
import type { ErrorCode } from '../errors.js';
import type { RfqLeg } from './records.js';
import type { Announced } from './announcement.js';

export interface ShardInit {
  shard: number;
  shardCount: number;
  dataDir: string;
  quoteWindowMs: number;
  lastLookMs: number;
  maxActiveRfqs: number;
  /** Longest a create's write is held to share its RFQ's terminal commit (shard.ts commitCreate); 0: never. */
  createCoalesceMs: number;
}

/** What the main thread has checked before it asks a shard to create an RFQ (contract 6.1). */
export interface CreateRfq {
  kind: 'create';
  callId: number;
  rfqKind: 'signed' | 'unsigned';
  replayKey: string;
  contentHash: string;
  userId: string;
  wallet: string;
  tier: number;
  legs: RfqLeg[];
  wagerMicros: string;
  minOddsE4: number;
  toleranceBps: number;
  orderType: 1 | 2;
  isShielded: boolean;
  /** Signed: the order's deadline. Unsigned: none (0), the quote window bounds it. */
  expiresAtMs: number;
  admittedAtMs: number;
  /** How long the taker's answer waits for the terminal result (wait_ms); 0: a `pending` 201 is due at once. */
  answerWaitMs: number;
  /** Set when the main thread already announced the RFQ to the makers; null: the shard announces it. */
  announced: Announced | null;
}

/** Sent alone (not in a batch) when the service stops: the shard finishes this turn's commit and exits. */
export const SHUTDOWN = 'shutdown';

export type MainToShard =
  | CreateRfq
  | { kind: 'status'; callId: number; requestId: string; userId: string }
  | { kind: 'cancel'; callId: number; requestId: string; userId: string }
  /** The maker connections an RFQ the shard announced went to: early close waits for exactly these. */
  | { kind: 'audience'; requestId: string; makerIds: string[] }
  | {
      kind: 'quote';
      requestId: string;
      makerId: string;
      makerAddress: string;
      quoteId: string;
      oddsE4: number;
      maxWagerMicros: string;
      isLastLook: boolean;
    }
  | { kind: 'decline'; requestId: string; makerId: string }
  | { kind: 'quote_cancel'; requestId: string; makerId: string; quoteId: string }
  | { kind: 'last_look_response'; requestId: string; makerId: string; quoteId: string; isAccepted: boolean }
  | { kind: 'maker_disconnected'; makerId: string };

export type CallOutcome<T> = { ok: true; value: T } | { ok: false; code: ErrorCode; message?: string };

export interface CreatedRfq {
  result: RfqResult;
  /** True when the replay key already existed: answer 200 with the current status, start nothing. */
  isReplay: boolean;
  persistUs: number;
}

export type ShardToMain =
  | { kind: 'created'; callId: number; outcome: CallOutcome<CreatedRfq> }
  | { kind: 'status'; callId: number; outcome: CallOutcome<RfqResult> }
  | { kind: 'cancelled'; callId: number; outcome: CallOutcome<RfqResult> }
  /**
   * A message for one maker connection (quote_ack, quote_reject, last_look, rfq_result), already JSON: the
   * shard serializes it so the main thread, the busier of the two, only writes it (docs/performance.md).
   */
  | { kind: 'to_maker'; makerId: string; frame: string }
  /** A new RFQ the main thread did not announce, for every connected maker; sent before its create commits. */
  | { kind: 'broadcast'; message: RfqMessage }
  /**
   * The RFQ reached a terminal state, durably: wake the HTTP waiters. `isAwaitedByCreate`: its create asked to
   * wait for it (answerWaitMs > 0), so a waiter registers even when this arrives first (shard-pool.ts).
   */
  | { kind: 'terminal'; result: RfqResult; isAwaitedByCreate: boolean; selectionUs: number; persistUs: number; createdAtMs: number }
  | { kind: 'stats'; activeRfqs: number };
