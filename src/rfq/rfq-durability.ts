// Inside an RFQ shard. What the actor (shard.ts, finalization.ts) needs of the engine that makes its
// decisions durable and moves its users' money, whichever engine the service runs (PARLAYD_ENGINE):
//   - lmdb-durability.ts: the shard as a synchronous LMDB client (a group commit per turn on its thread);
//   - journal-durability.ts: the shard as the owner of its accounts in memory (src/engine), durable by its
//     journal, with LMDB as the read model written behind.
// Every method decides at once what it can (a reservation taken or refused before any maker hears of the
// RFQ) and resolves once the decision is durable; nothing is told to anyone before that.
import type { ActiveRfq } from './active-rfq.js';
import type { FillRecord } from '../records/fills.js';
import type { CreateRfq } from './messages.js';
import type { ChannelPoint, MoneyOp, MoneyResult } from '../ledger/money-ops.js';
import type { RfqKeyRecord, RfqRecord } from '../records/rfqs.js';

/** A fill that the maker's collateral no longer covers: nothing was written, selection goes on. */
export const UNCOVERED = Symbol('uncovered');

/** An RFQ's end as written, and how long making it durable took (µs, a stage latency in /metrics). */
export interface WrittenEnd {
  record: RfqRecord;
  persistUs: number;
}

export interface RfqDurability {
  /** At start, before any message: the RFQs of this shard's users that were active end failed SERVICE_RESTARTED. */
  failInterrupted(): Promise<number>;
  replayKey(replayKey: string): RfqKeyRecord | undefined;
  /** An RFQ's record as this shard last decided it (its own writes included). */
  readRfq(requestId: string): RfqRecord | undefined;
  /**
   * The create: the wager reserved with the record and its replay key. Decided now: null when the balance
   * does not cover the wager (nothing changes); else resolves with the µs it took to be durable. `holdMs`:
   * how long the lmdb engine may hold the write to share the RFQ's terminal commit.
   */
  create(command: CreateRfq, created: RfqRecord, rfq: ActiveRfq, holdMs: number): Promise<number> | null;
  /** Every end but a fill: the whole reservation goes back with the terminal record. null: the create never was. */
  release(rfq: ActiveRfq, ended: RfqRecord): Promise<WrittenEnd | null>;
  /**
   * A fill (`completed`, its maker's `fill`), or `failed MARKET_CLOSED` when a leg no longer takes bets at the
   * moment it is decided, or UNCOVERED when the maker's available no longer covers the liability.
   */
  fill(rfq: ActiveRfq, completed: RfqRecord, fill: FillRecord, areLegsOpen: () => boolean): Promise<WrittenEnd | typeof UNCOVERED | null>;
  /** A maker's available as this shard sees it now: a quote's first check (the fill decides exactly). */
  makerAvailable(makerAddress: string): bigint;
  /** A movement of users' money that is not an RFQ's (messages.ts MoneyOp). */
  money(op: MoneyOp): Promise<MoneyResult>;
  /**
   * Resolves once LMDB shows everything decided before the call (at once for the lmdb engine); with `after`,
   * first once what that owner sent this one up to that seq is applied here. Answers how far this owner had
   * sent on each of its channels when called (none on the lmdb engine, or with one shard).
   */
  barrier(after?: ChannelPoint): Promise<ChannelPoint[]>;
  /** Commits since the last call, and the transactions in them (the shard's stats). */
  takeCommitCounts(): { commits: number; transactions: number };
  /** The service stops: what was decided is made durable (LMDB's group commit already is). */
  close(): Promise<void>;
}
