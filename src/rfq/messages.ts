// Both threads. Every message between the main thread and an RFQ shard worker, declared once, as a
// discriminated union per direction, so `switch (msg.kind)` is checked for exhaustiveness. Messages travel
// in batches (arrays) flushed once per event-loop turn (src/lib/batcher.ts). Money crosses as decimal strings.
import type { RfqResult } from '../contract/rfq.js';
import type { RfqMessage } from '../contract/mm.js';
import type { MakerFact, NoFact } from './maker-facts.js';
import type { ErrorCode } from '../lib/errors.js';
import type { RfqLeg } from '../records/rfqs.js';
import type { WithdrawnQuote } from './active-rfq.js';
import type { MessagePort } from 'node:worker_threads';
import type { Effect } from '../engine/effects.js';
import type { ChannelPoint, EngineKind, MoneyOp, MoneyResult } from '../ledger/money-ops.js';

export interface ShardInit {
  shard: number;
  shardCount: number;
  dataDir: string;
  quoteWindowMs: number;
  lastLookMs: number;
  /** PARLAYD_MAX_FINALIZING_MS: longest an RFQ spends in last looks (last-look.ts). */
  maxFinalizingMs: number;
  maxActiveRfqs: number;
  /** Longest a create's write is held to share its RFQ's terminal commit (shard.ts commitCreate); 0: never. */
  createCoalesceMs: number;
  /** PARLAYD_LMDB_MAP_SIZE_MB in bytes (store/db.ts); absent: the default. */
  mapSizeBytes?: number;
  /** The main thread's room state (store/room.ts), shared: a limit raised at run time reaches the shard. */
  roomState?: SharedArrayBuffer;
  /** PARLAYD_ENGINE: how the shard makes its decisions durable (rfq-durability.ts). */
  engine: EngineKind;
  /** The journal engine's: this shard's ends of the ports to the other shards (engine/peer-links.ts). */
  peerPorts?: Map<number, MessagePort>;
  /** The journal engine's first start on a data directory of today's layout: this owner's first record (engine/from-store.ts). */
  firstRecord?: Effect[];
}

/** A contract error decided without owned state, for the shard to apply after the replay check. */
export interface Refusal {
  code: ErrorCode;
  message: string;
}

/** What admission decides (rfq/admission.ts); the route adds how long the answer may wait (`answerWaitMs`). */
export type CreateCommand = Omit<CreateRfq, 'kind' | 'callId' | 'answerWaitMs'>;

/**
 * What the main thread has checked before it asks a shard to create an RFQ (contract 6.1): everything that
 * needs no state a shard owns. The shard decides the rest: replay, balance, acceptance, the id and times.
 */
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
  /**
   * The first check that failed on the main thread (expiry, legs, wager range), or null. Applied only after
   * the replay check: a replay answers 200 even after its order expired or its markets closed (contract 6).
   */
  refusal: Refusal | null;
}

/** Sent alone (not in a batch) when the service stops: the shard finishes this turn's commit and exits. */
export const SHUTDOWN = 'shutdown';

export type MainToShard =
  | CreateRfq
  | { kind: 'money'; callId: number; op: MoneyOp }
  | { kind: 'status'; callId: number; requestId: string; userId: string }
  | { kind: 'cancel'; callId: number; requestId: string; userId: string }
  /** The maker connections a new RFQ went to (after its `broadcast`): early close waits for exactly these. */
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
      /** When the main thread read the quote from the socket (quote_ack received_at_ms). */
      receivedAtMs: number;
    }
  | { kind: 'decline'; requestId: string; makerId: string }
  /** Consecutive declines of one RFQ, packed for the trip to the shard (pack-declines.ts). */
  | { kind: 'declines'; requestId: string; makerIds: string[] }
  | { kind: 'quote_cancel'; requestId: string; makerId: string; quoteId: string }
  | {
      kind: 'last_look_response';
      requestId: string;
      makerId: string;
      quoteId: string;
      isAccepted: boolean;
      /** When the main thread read it from the socket: an answer read past the last look's deadline_ms is late. */
      receivedAtMs: number;
    }
  | { kind: 'maker_disconnected'; makerId: string }
  /** quote_cancel_all or a tripped protection: withdraw every standing quote of these connections. */
  | { kind: 'withdraw_quotes'; callId: number; makerIds: string[] }
  /**
   * Answered once LMDB holds everything the shard decided before it (the journal engine's read barrier);
   * with `after`, first once the shard has applied what owner `from` sent it up to channel seq `seq`.
   */
  | { kind: 'barrier'; callId: number; after?: ChannelPoint };

export type CallOutcome<T> = { ok: true; value: T } | { ok: false; code: ErrorCode; message?: string };

export interface CreatedRfq {
  result: RfqResult;
  /** True when the replay key already existed: answer 200 with the current status, start nothing. */
  isReplay: boolean;
  persistUs: number;
}

/** A frame for one maker connection, and the fact it carries, if any (ShardToMain `to_maker`). */
export type ToMakerEvent = { kind: 'to_maker'; makerId: string; frame: string } & (MakerFact | NoFact);

export type ShardToMain =
  | { kind: 'created'; callId: number; outcome: CallOutcome<CreatedRfq> }
  | { kind: 'status'; callId: number; outcome: CallOutcome<RfqResult> }
  | { kind: 'cancelled'; callId: number; outcome: CallOutcome<RfqResult> }
  | { kind: 'money'; callId: number; outcome: CallOutcome<MoneyResult> }
  | { kind: 'withdrawn'; callId: number; outcome: CallOutcome<WithdrawnQuote[]> }
  | { kind: 'barrier'; callId: number; outcome: CallOutcome<ChannelPoint[]> }
  /** Recovery at start is done (RFQs active at the last stop failed and released): the shard takes work. */
  | { kind: 'ready'; failedRfqs: number }
  /**
   * A message for one maker connection (quote_ack, quote_reject, last_look, rfq_result), already JSON: the
   * shard serializes it so the main thread, the busier of the two, only writes it (docs/performance.md).
   * Beside the frame, the fields of what the desk learns from it (rfq/maker-facts.ts: `fact` and its fields), typed,
   * so the main thread never parses the frame; no `fact` when there is none (a quote_ack).
   */
  | ToMakerEvent
  /**
   * A new RFQ the shard accepted, for every connected maker: sent right after the shard decided, before its
   * create commits. The one way an RFQ reaches makers; the main thread answers with its `audience`.
   */
  | { kind: 'broadcast'; message: RfqMessage }
  /**
   * The RFQ reached a terminal state, durably: wake the HTTP waiters. `isAwaitedByCreate`: its create asked to
   * wait for it (answerWaitMs > 0), so a waiter registers even when this arrives first (shard-pool.ts).
   */
  | {
      kind: 'terminal';
      result: RfqResult;
      isAwaitedByCreate: boolean;
      /** Its quoting stage (ActiveRfq.quotingUs); null when it ended before quoting closed (a cancel). */
      quotingUs: number | null;
      selectionUs: number;
      persistUs: number;
      createdAtMs: number;
      /** The maker whose quote filled it (its address), or null: per-maker fills in /metrics. */
      filledBy: string | null;
    }
  /** Every second: active RFQs, and the group commits made since the last stats (with the transactions in them). */
  | { kind: 'stats'; activeRfqs: number; commits: number; commitTransactions: number };
